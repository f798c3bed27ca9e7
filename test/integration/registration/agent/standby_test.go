package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/get"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/faults"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// standbyApp is the namespace of the workload both hubs deliver.
const standbyApp = "standby-app"

// failoverTimeout bounds the waits that include the hub connection timeout.
const failoverTimeout = 5 * time.Minute

// TestStandbyHub checks what join with a second --hub-apiserver and
// --hub-token writes (a client dry run), joins a cluster to a primary hub,
// delivers the same ManifestWork from the primary and a standby hub (which
// approves the cluster's bootstrap identity automatically), adds the
// standby with join --add-hub, then kills the primary's API server.
// After the hub connection timeout the agent registers with the standby,
// whose work takes over the applied objects: none is deleted or recreated,
// also after the primary's records are evicted. get klusterlet shows the
// standby as current. The time from the primary's death to the cluster
// Available on the standby, and to the work applied there, is logged.
func TestStandbyHub(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 10*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{"hub2", clusterName}}})
	primary, standby, spoke := f.Hub, f.Env.Cluster("hub2"), f.Env.Cluster(clusterName)
	hubtest.Install(ctx, t, standby.Client(), agenttest.RunnerHub(config.HubValues{}))
	tokens := map[*framework.Cluster]string{primary: f.Token, standby: hubtest.BootstrapToken(ctx, t, standby)}
	// The standby accepts the cluster's bootstrap identity by itself, as a
	// standby prepared for a failover nobody watches does.
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.ClusterManagerName},
		Spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: []string{identity.BootstrapUser}}}}
	if err := standby.Client().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	flagsFor := f.Flags
	// join with both hubs checks both and writes both bootstrap
	// kubeconfigs, listed in the Klusterlet; here as a client dry run.
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := join.NewOptions(flagsFor(clusterName), streams)
	o.HubAPIServer, o.HubToken, o.ClusterName = primary.Server(), tokens[primary], clusterName
	o.CACertHashes = hubPins(ctx, t, primary, standby)
	o.StandbyHubs = []join.Hub{{APIServer: standby.Server(), Token: tokens[standby]}}
	o.HubConnectionTimeoutSeconds = operatorv1.MinHubConnectionTimeoutSeconds
	o.Image, o.DryRun, o.PrintFlags.OutputFormat = agenttest.TestImage, cli.DryRunClient, ptr.To("yaml")
	if err := agenttest.RunJoin(ctx, o); err != nil {
		t.Fatalf("join with a standby hub, dry run: %v\noutput:\n%s", err, out)
	}
	for _, want := range []string{"name: bootstrap-hub-kubeconfig-2", "type: LocalSecrets", "hubConnectionTimeoutSeconds: 180"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("join with a standby hub prints no %q:\n%s", want, out)
		}
	}

	// The cluster joins the primary, then gains the standby with --add-hub.
	f.Join(ctx, t, clusterName, func(o *join.Options) { o.CAFile, o.CACertHashes = "", hubPins(ctx, t, primary) })
	// The primary's records are evicted soon after the failover, so that
	// the test sees what their eviction does to the objects.
	setEvictionGrace(ctx, t, spoke.Client(), 20*time.Second)
	mustAccept(ctx, t, flagsFor("hub"), clusterName)
	setLease(ctx, t, primary.Client(), rotationLease, clusterName)
	for _, h := range []*framework.Cluster{primary, standby} {
		createStandbyWork(ctx, t, h.Client())
	}
	waitWorkApplied(ctx, t, primary, "the primary's work")
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	o = join.NewOptions(flagsFor(clusterName), streams)
	o.AddHub, o.HubAPIServer, o.HubToken = true, standby.Server(), tokens[standby]
	o.CACertHashes = hubPins(ctx, t, standby)
	o.HubConnectionTimeoutSeconds = operatorv1.MinHubConnectionTimeoutSeconds
	if err := agenttest.RunJoin(ctx, o); err != nil {
		t.Fatalf("join --add-hub: %v\noutput:\n%s", err, out)
	}
	if !strings.Contains(out.String(), "Added hub "+standby.Server()+" as hub 2 of cluster "+clusterName) {
		t.Errorf("join --add-hub does not say it added the standby hub:\n%s", out)
	}
	// The agent restarts with both hubs and stays with the primary, the hub
	// its credential is for.
	framework.Eventually(ctx, t, pollTimeout, "the agent connected to hub 1 of 2", func(ctx context.Context) (bool, error) {
		k := &operatorv1.Klusterlet{}
		if err := spoke.Client().Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionHubConnectionDegraded)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, primary.Server()) && strings.Contains(c.Message, "(hub 1 of 2"), nil
	})
	hubsShown(ctx, t, flagsFor(clusterName), primary.Server())

	objects := faults.WatchObjects(t, spoke, standbyApp,
		corev1.SchemeGroupVersion.WithResource("configmaps"), appsv1.SchemeGroupVersion.WithResource("deployments"))
	if got := objects.Objects(); !slices.Contains(got, "configmaps/"+standbyApp+"/app-config") || !slices.Contains(got, "deployments/"+standbyApp+"/app") {
		t.Fatalf("objects in namespace %s: %v, want the work's ConfigMap and Deployment", standbyApp, got)
	}

	killed := time.Now()
	if err := primary.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the primary hub's API server; the agent moves after %ds without a lease renewal", operatorv1.MinHubConnectionTimeoutSeconds)
	waitAvailable := func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		err := standby.Client().Get(ctx, client.ObjectKey{Name: clusterName}, mc)
		return err == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), client.IgnoreNotFound(err)
	}
	framework.Eventually(ctx, t, failoverTimeout, clusterName+" Available on the standby hub", waitAvailable)
	available := time.Since(killed)
	waitWorkApplied(ctx, t, standby, "the standby's work")
	applied := time.Since(killed)
	t.Logf("failover: primary killed → %s Available on the standby %s, → its work applied there %s (hub connection timeout %ds)",
		clusterName, available.Round(100*time.Millisecond), applied.Round(100*time.Millisecond), operatorv1.MinHubConnectionTimeoutSeconds)
	hubsShown(ctx, t, flagsFor(clusterName), standby.Server())

	// The primary's records go after the grace period; the objects they
	// shared with the standby's records stay.
	framework.Eventually(ctx, t, pollTimeout, "the primary's AppliedManifestWork evicted", func(ctx context.Context) (bool, error) {
		list := &workv1.AppliedManifestWorkList{}
		if err := spoke.Client().List(ctx, list); err != nil {
			return false, err
		}
		return len(list.Items) == 1, nil
	})
	cmObj := &corev1.ConfigMap{}
	if err := spoke.Client().Get(ctx, client.ObjectKey{Namespace: standbyApp, Name: "app-config"}, cmObj); err != nil {
		t.Fatalf("the ConfigMap after the eviction: %v", err)
	}
	if n := len(cmObj.OwnerReferences); n != 1 {
		t.Errorf("the ConfigMap has %d owners after the primary's record was evicted, want the standby's record only", n)
	}
	t.Logf("applied objects deleted: %d, recreated: %d", len(objects.Deleted()), len(objects.Recreated()))
	if d, r := objects.Deleted(), objects.Recreated(); len(d) > 0 || len(r) > 0 {
		t.Errorf("the failover deleted %v and recreated %v; want none", d, r)
	}
}

// setEvictionGrace sets the Klusterlet's appliedManifestWorkEvictionGracePeriod.
func setEvictionGrace(ctx context.Context, t *testing.T, c client.Client, grace time.Duration) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"workConfiguration":{"appliedManifestWorkEvictionGracePeriod":%q}}}`, grace.String()))
	if err := c.Patch(ctx, &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName}}, patch); err != nil {
		t.Fatal(err)
	}
}

// createStandbyWork creates, on a hub, the ManifestWork app of both hubs: a
// namespace, a ConfigMap and a Deployment.
func createStandbyWork(ctx context.Context, t *testing.T, hub client.Client) {
	t.Helper()
	// On the standby hub, prepared for the cluster before it registers
	// there.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterName,
		Annotations: map[string]string{clusternamespace.PreparedAnnotation: clusterName}}}
	if err := hub.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	w, err := framework.AppWork(clusterName, "app", standbyApp)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
}

// waitWorkApplied waits until the ManifestWork app on hub is Applied and
// Available.
func waitWorkApplied(ctx context.Context, t *testing.T, hub *framework.Cluster, what string) {
	t.Helper()
	framework.Eventually(ctx, t, failoverTimeout, what+" applied", func(ctx context.Context) (bool, error) {
		w := &workv1.ManifestWork{}
		if err := hub.Client().Get(ctx, client.ObjectKey{Namespace: clusterName, Name: "app"}, w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) && meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable), nil
	})
}

// hubsShown checks that get klusterlet shows server as the current hub.
func hubsShown(ctx context.Context, t *testing.T, flags *genericclioptions.ConfigFlags, server string) {
	t.Helper()
	var last string
	framework.Eventually(ctx, t, failoverTimeout, "get klusterlet showing "+server+" as the current hub", func(ctx context.Context) (bool, error) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o := get.NewKlusterletOptions(flags, streams)
		if err := o.Run(ctx); err != nil {
			return false, err
		}
		last = out.String()
		for line := range strings.SplitSeq(last, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[1] == server && f[2] == "yes" {
				return true, nil
			}
		}
		return false, nil
	})
	if !bytes.Contains([]byte(last), []byte("Hub connection timeout:")) {
		t.Errorf("get klusterlet does not show the hub connection timeout:\n%s", last)
	}
}
