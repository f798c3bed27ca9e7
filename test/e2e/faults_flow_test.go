package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// burst is how many ManifestWorks of one ConfigMap each the flow holds.
const burst = 100

// flow is a hub and cluster1, whose agent reaches the hub through a proxy,
// with the writes to the works' objects counted on both sides.
type flow struct {
	*fleet
	hub, c1 *framework.Cluster
	proxy   *framework.Proxy
	// lists counts the test's own LIST requests; hubc and c1c are its
	// clients, counted.
	lists     listCounter
	hubc, c1c client.Client
	// cms counts the writes to the works' ConfigMaps on cluster1 and
	// records their successive data.version; amws those to the
	// AppliedManifestWorks; mws those to the ManifestWorks on the hub.
	cms, amws, mws *writes
}

// testWorkFlowFaults kills the agent in the middle of a burst of works,
// restarts each API server and etcd while works flow, and cuts the agent
// off the hub for longer than the lease. After each fault what is applied on
// cluster1 equals what the hub says, with no object lost or applied twice,
// and the figures (convergence time, writes, requests) are logged as
// "fault=<name> key=value ...".
func testWorkFlowFaults(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1")
	fl := &flow{fleet: f, hub: f.env.Cluster("hub"), c1: f.env.Cluster("cluster1")}
	f.joinAllVia(t, func(hub string) string {
		u, err := url.Parse(hub)
		require.NoError(t, err)
		fl.proxy = framework.StartProxyForTest(t, u.Host)
		return "https://" + fl.proxy.Addr()
	}, "cluster1")
	var err error
	fl.hubc, err = client.New(fl.lists.config(fl.hub.RESTConfig()), client.Options{Scheme: apis.Scheme})
	require.NoError(t, err)
	fl.c1c, err = client.New(fl.lists.config(fl.c1.RESTConfig()), client.Options{Scheme: apis.Scheme})
	require.NoError(t, err)
	fl.cms = watchWrites(t, fl.lists.config(fl.c1.RESTConfig()), corev1.SchemeGroupVersion.WithResource("configmaps"), "default", "e2e-work", "data", "version")
	fl.amws = watchWrites(t, fl.lists.config(fl.c1.RESTConfig()), workv1.GroupVersion.WithResource("appliedmanifestworks"), "", "")
	fl.mws = watchWrites(t, fl.lists.config(fl.hub.RESTConfig()), workv1.GroupVersion.WithResource("manifestworks"), "cluster1", "")

	t.Run("agent killed mid-burst", fl.agentKilled)
	t.Run("API servers and etcd restarted", fl.restarts)
	t.Run("network partition", fl.partition)
}

// agentKilled creates burst works and kills the agent with SIGKILL once a
// quarter of them is applied; then kills the converged agent again, which
// must write nothing.
func (fl *flow) agentKilled(t *testing.T) {
	ctx := t.Context()
	created := make(chan error, 1)
	go func() {
		for i := range burst {
			if err := fl.hubc.Create(ctx, configMapWork("cluster1", burstName(i), 1, "v1")); err != nil {
				created <- err
				return
			}
		}
		created <- nil
	}()
	var applied int
	framework.Eventually(t.Context(), t, time.Minute, "a quarter of the burst applied", func(ctx context.Context) (bool, error) {
		list := &corev1.ConfigMapList{}
		err := fl.c1c.List(ctx, list, client.InNamespace("default"), client.HasLabels{"e2e-work"})
		applied = len(list.Items)
		return applied >= burst/4, err
	})
	agent := fl.kill(t, "cluster1", config.AgentNamespace, agentDeployment)
	killed := time.Now()
	restarted := fl.waitNewAgent(t, agent)
	require.NoError(t, <-created)
	converge := fl.converge(t, killed)
	c := fl.cms.counts(t)
	cmCreated, cmUpdated, cmDeleted, _ := c.since(writeCounts{})
	amwCreated, amwUpdated, _, _ := fl.amws.counts(t).since(writeCounts{})
	_, mwUpdated, _, _ := fl.mws.counts(t).since(writeCounts{})
	t.Logf("fault=agent-kill works=%d applied_at_kill=%d restart=%s converge=%s cm_created=%d cm_updated=%d cm_deleted=%d amw_created=%d amw_updated=%d mw_status_writes=%d",
		burst, applied, restarted.Round(100*time.Millisecond), converge.Round(100*time.Millisecond), cmCreated, cmUpdated, cmDeleted, amwCreated, amwUpdated, mwUpdated)
	for i := range burst {
		assert.Equal(t, 1, c.created[burstName(i)+"-0"], "ConfigMap %s-0 created %d times", burstName(i), c.created[burstName(i)+"-0"])
	}
	assert.Zero(t, cmUpdated, "ConfigMaps updated whose content never changed")
	assert.Zero(t, cmDeleted, "ConfigMaps deleted")

	// A restart of the converged agent reads every work again and writes
	// nothing; two works created after it started bound its initial pass.
	before := fl.snapshot(t)
	agent = fl.kill(t, "cluster1", config.AgentNamespace, agentDeployment)
	killed = time.Now()
	fl.waitNewAgent(t, agent)
	for _, name := range []string{"sentinel-a", "sentinel-b"} {
		require.NoError(t, fl.hubc.Create(ctx, configMapWork("cluster1", name, 1, "v1")))
		waitWorkApplied(t, fl.hubc, "cluster1", name, 2*time.Minute)
	}
	converge = fl.converge(t, killed)
	cm, amw, mw := fl.writesSince(t, before, "sentinel-")
	t.Logf("fault=agent-kill-converged works=%d converge=%s spurious_cm_writes=%d spurious_amw_writes=%d spurious_mw_writes=%d",
		burst, converge.Round(100*time.Millisecond), len(cm), len(amw), len(mw))
	assert.Empty(t, cm, "ConfigMaps written by the restart of a converged agent")
	assert.Empty(t, amw, "AppliedManifestWorks written by the restart of a converged agent")
	assert.Empty(t, mw, "ManifestWorks written by the restart of a converged agent")
}

// waitNewAgent waits until an agent other than old runs, and returns how
// long that took.
func (fl *flow) waitNewAgent(t *testing.T, old instance) time.Duration {
	t.Helper()
	start := time.Now()
	framework.Eventually(t.Context(), t, time.Minute, "the agent running again", func(ctx context.Context) (bool, error) {
		now, ok := fl.running(ctx, "cluster1", config.AgentNamespace, agentDeployment)
		return ok && now.id != old.id, nil
	})
	return time.Since(start)
}

// snapshot is the write counts of the flow at one moment.
type snapshot struct{ cms, amws, mws writeCounts }

func (fl *flow) snapshot(t *testing.T) snapshot {
	t.Helper()
	return snapshot{fl.cms.counts(t), fl.amws.counts(t), fl.mws.counts(t)}
}

// writesSince returns the names of the ConfigMaps, AppliedManifestWorks and
// ManifestWorks written since before, leaving out names containing skip
// unless it is empty.
func (fl *flow) writesSince(t *testing.T, before snapshot, skip string) (cms, amws, mws []string) {
	t.Helper()
	now := fl.snapshot(t)
	keep := func(names []string) (out []string) {
		for _, n := range names {
			if skip == "" || !strings.Contains(n, skip) {
				out = append(out, n)
			}
		}
		return out
	}
	_, _, _, cms = now.cms.since(before.cms)
	_, _, _, amws = now.amws.since(before.amws)
	_, _, _, mws = now.mws.since(before.mws)
	return keep(cms), keep(amws), keep(mws)
}

// burstName names the i-th work of the burst.
func burstName(i int) string { return fmt.Sprintf("burst-%d", i) }

// setVersion changes the work's ConfigMaps to hold version.
func (fl *flow) setVersion(t *testing.T, name, version string) {
	t.Helper()
	framework.Eventually(t.Context(), t, time.Minute, "work "+name+" changed to "+version, func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := fl.hubc.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: name}, mw); err != nil {
			return false, err
		}
		base := mw.DeepCopy()
		mw.Spec.Workload = configMapWork("cluster1", name, len(mw.Spec.Workload.Manifests), version).Spec.Workload
		err := fl.hubc.Patch(ctx, mw, client.MergeFrom(base))
		return err == nil, err
	})
}

// converge waits until cluster1 holds what the hub says, and returns the
// time since start.
func (fl *flow) converge(t *testing.T, start time.Time) time.Duration {
	t.Helper()
	framework.Eventually(t.Context(), t, 3*time.Minute, "cluster1 to hold what the hub says", func(ctx context.Context) (bool, error) {
		err := fl.matchesHub(ctx)
		return err == nil, err
	})
	return time.Since(start)
}

// matchesHub returns nil when every ManifestWork of cluster1 is Applied at
// its generation, each of its ConfigMaps exists on cluster1 with the version
// the hub holds, its AppliedManifestWork records exactly those ConfigMaps
// with their UIDs, and cluster1 holds no other ConfigMap of a work.
func (fl *flow) matchesHub(ctx context.Context) error {
	works := &workv1.ManifestWorkList{}
	if err := fl.hubc.List(ctx, works, client.InNamespace("cluster1")); err != nil {
		return err
	}
	cms := &corev1.ConfigMapList{}
	if err := fl.c1c.List(ctx, cms, client.InNamespace("default"), client.HasLabels{"e2e-work"}); err != nil {
		return err
	}
	amws := &workv1.AppliedManifestWorkList{}
	if err := fl.c1c.List(ctx, amws); err != nil {
		return err
	}
	byName := map[string]corev1.ConfigMap{}
	for _, cm := range cms.Items {
		byName[cm.Name] = cm
	}
	applied := map[string]workv1.AppliedManifestWork{}
	for _, a := range amws.Items {
		applied[a.Spec.ManifestWorkName] = a
	}
	want := 0
	for _, mw := range works.Items {
		c := meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkApplied)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != mw.Generation {
			return fmt.Errorf("work %s is not Applied at generation %d", mw.Name, mw.Generation)
		}
		records := map[string]string{}
		for _, r := range applied[mw.Name].Status.AppliedResources {
			records[r.Name] = r.UID
		}
		if len(records) != len(mw.Spec.Workload.Manifests) {
			return fmt.Errorf("the AppliedManifestWork of work %s records %d objects, the work has %d", mw.Name, len(records), len(mw.Spec.Workload.Manifests))
		}
		for _, m := range mw.Spec.Workload.Manifests {
			var obj struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
				Data     map[string]string `json:"data"`
			}
			if err := json.Unmarshal(m.Raw, &obj); err != nil {
				return fmt.Errorf("decode a manifest of work %s: %w", mw.Name, err)
			}
			want++
			cm, ok := byName[obj.Metadata.Name]
			switch {
			case !ok:
				return fmt.Errorf("ConfigMap %s of work %s is missing on cluster1", obj.Metadata.Name, mw.Name)
			case cm.Data["version"] != obj.Data["version"]:
				return fmt.Errorf("ConfigMap %s holds version %q, the hub says %q", cm.Name, cm.Data["version"], obj.Data["version"])
			case records[cm.Name] != string(cm.UID):
				return fmt.Errorf("the AppliedManifestWork of work %s records ConfigMap %s with UID %q, it has %q", mw.Name, cm.Name, records[cm.Name], cm.UID)
			}
		}
	}
	if len(cms.Items) != want {
		return fmt.Errorf("cluster1 holds %d ConfigMaps of works, the hub's works hold %d", len(cms.Items), want)
	}
	return nil
}
