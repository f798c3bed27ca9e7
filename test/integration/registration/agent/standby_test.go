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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/get"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// standbyApp is the namespace of the workload both hubs deliver.
const standbyApp = "standby-app"

// TestStandbyHub joins a cluster to a primary hub with a standby hub
// (join with a second --hub-apiserver and --hub-token; the standby
// approves the cluster's bootstrap identity automatically), delivers the
// same ManifestWork from both hubs, then kills the primary's API server.
// After the hub connection timeout the agent registers with the standby,
// whose work takes over the applied objects: none is deleted or recreated,
// also after the primary's records are evicted. get klusterlet shows the
// standby as current. The time from the primary's death to the cluster
// Available on the standby, and to the work applied there, is logged.
func TestStandbyHub(t *testing.T) {
	framework.SkipIfShort(t)
	bin := framework.BuildForTest(t, "./controllers/cmd/ocm-controller", "ocm-controller")
	env := framework.StartForTest(t, "hub", "hub2", clusterName)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	primary, standby, spoke := env.Cluster("hub"), env.Cluster("hub2"), env.Cluster(clusterName)
	framework.StartRunnerForTest(t, map[string]string{"ocm-controller": bin}, primary, standby, spoke)
	hubObjs, err := config.HubObjects(config.HubValues{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[*framework.Cluster]string{}
	for _, h := range []*framework.Cluster{primary, standby} {
		applyAll(ctx, t, h.Client(), hubObjs)
		if tokens[h], err = h.ServiceAccountToken(ctx, config.OperatorNamespace, identity.BootstrapServiceAccount, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// The standby accepts the cluster's bootstrap identity by itself, as a
	// standby prepared for a failover nobody watches does.
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.ClusterManagerName},
		Spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: []string{identity.BootstrapUser}}}}
	if err := standby.Client().Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	flagsFor := func(context string) *genericclioptions.ConfigFlags {
		f := genericclioptions.NewConfigFlags(false)
		f.KubeConfig, f.Context = ptr.To(env.Kubeconfig()), ptr.To(context)
		return f
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := join.NewOptions(flagsFor(clusterName), streams)
	o.HubAPIServer, o.HubToken, o.ClusterName = primary.Server(), tokens[primary], clusterName
	o.StandbyHubs = []join.Hub{{APIServer: standby.Server(), Token: tokens[standby]}}
	o.HubConnectionTimeoutSeconds = operatorv1.MinHubConnectionTimeoutSeconds
	o.Image, o.Wait, o.Timeout = "example.com/ocm-controller:test", true, 2*time.Minute
	if err := runJoin(ctx, o); err != nil {
		t.Fatalf("join: %v\noutput:\n%s", err, out)
	}
	if !strings.Contains(out.String(), "Standby hub 2: "+standby.Server()) {
		t.Errorf("join does not name the standby hub:\n%s", out)
	}
	// The primary's records are evicted soon after the failover, so that
	// the test sees what their eviction does to the objects.
	setEvictionGrace(ctx, t, spoke.Client(), 20*time.Second)
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	a := accept.NewOptions(flagsFor("hub"), streams)
	a.Clusters, a.Wait, a.Timeout = []string{clusterName}, true, 2*time.Minute
	if err := a.Complete(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := a.Run(ctx); err != nil {
		t.Fatalf("accept: %v\noutput:\n%s", err, out)
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"leaseDurationSeconds":%d}}`, rotationLease))
	if err := primary.Client().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}, patch); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*framework.Cluster{primary, standby} {
		createStandbyWork(ctx, t, h.Client())
	}
	waitWorkApplied(ctx, t, primary, "the primary's work")
	hubsShown(ctx, t, flagsFor(clusterName), primary.Server())

	objects := framework.WatchObjects(t, spoke, standbyApp,
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
	longEventually(ctx, t, clusterName+" Available on the standby hub", waitAvailable)
	available := time.Since(killed)
	waitWorkApplied(ctx, t, standby, "the standby's work")
	applied := time.Since(killed)
	t.Logf("failover: primary killed → %s Available on the standby %s, → its work applied there %s (hub connection timeout %ds)",
		clusterName, available.Round(100*time.Millisecond), applied.Round(100*time.Millisecond), operatorv1.MinHubConnectionTimeoutSeconds)
	hubsShown(ctx, t, flagsFor(clusterName), standby.Server())

	// The primary's records go after the grace period; the objects they
	// shared with the standby's records stay.
	eventually(ctx, t, "the primary's AppliedManifestWork evicted", func(ctx context.Context) (bool, error) {
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
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
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
	longEventually(ctx, t, what+" applied", func(ctx context.Context) (bool, error) {
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
	longEventually(ctx, t, "get klusterlet showing "+server+" as the current hub", func(ctx context.Context) (bool, error) {
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

// longEventually is eventually for waits that include the hub connection
// timeout: at most 5 minutes.
func longEventually(ctx context.Context, t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}
