package importer_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/importer"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/capi"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/agenttest"
)

// TestImportFromClusterAPI imports cluster1 from a Cluster API Cluster on
// the hub, played by the test (the Cluster CRD from Cluster API's types,
// installed after the importer started, a Cluster and its kubeconfig
// Secret): the importer restarts to watch Clusters, creates the
// ManagedCluster, waits while the control plane is not initialized, then
// installs the Klusterlet with the Cluster's kubeconfig, and cluster1
// becomes Available once accepted. A Cluster outside the namespace of its
// own name gets no ManagedCluster.
func TestImportFromClusterAPI(t *testing.T) {
	ctx, f := agenttest.StartFleet(t, 8*time.Minute, agenttest.FleetOptions{
		Options:    framework.Options{Clusters: []string{"cluster1"}},
		Hub:        config.HubValues{Importer: &config.ImporterValues{}},
		RunnerArgs: map[string][]string{"ocm-importer": {"--allow-loopback-import"}},
	})
	hub, spoke := f.Hub.Client(), f.Env.Cluster("cluster1")
	// Cluster API is installed after the importer started, which restarts
	// to watch its Clusters.
	if err := capi.Install(ctx, hub); err != nil {
		t.Fatal(err)
	}
	info, err := imp.ClusterInfo(f.Hub.Server(), f.CA)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, info); err != nil {
		t.Fatal(err)
	}
	// A Cluster whose ManagedCluster would be named after it from another
	// namespace: only a ManagedCluster that names it imports it.
	if err := capi.Provision(ctx, hub, "team-a", "cluster9", kubeconfigBytes(t, spoke.RESTConfig()), true); err != nil {
		t.Fatal(err)
	}

	if err := capi.Provision(ctx, hub, "cluster1", "cluster1", kubeconfigBytes(t, spoke.RESTConfig()), false); err != nil {
		t.Fatal(err)
	}
	t.Run("the ManagedCluster waits for the control plane", func(t *testing.T) {
		waitCondition(ctx, t, hub, "cluster1", metav1.ConditionFalse, imp.ReasonKubeConfigNotFound, "control plane is not initialized")
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			t.Fatal(err)
		}
		if got := mc.Annotations[importer.CAPIAnnotation]; got != "cluster1/cluster1" {
			t.Errorf("annotation %s = %q, want cluster1/cluster1", importer.CAPIAnnotation, got)
		}
		if mc.Spec.HubAcceptsClient {
			t.Error("the importer accepted the cluster")
		}
	})
	t.Run("an initialized control plane imports the cluster", func(t *testing.T) {
		if err := capi.SetInitialized(ctx, hub, "cluster1", "cluster1"); err != nil {
			t.Fatal(err)
		}
		waitCondition(ctx, t, hub, "cluster1", metav1.ConditionTrue, imp.ReasonImportSucceed, "Installed the Klusterlet")
		f.Accept(ctx, t, "cluster1")
		framework.Eventually(ctx, t, pollTimeout, "cluster1 Available", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
		})
		// Cluster API's Secret stays: it is Cluster API's.
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: imp.CAPIKubeconfigSecret("cluster1")}, &corev1.Secret{}); err != nil {
			t.Errorf("the Cluster's kubeconfig Secret: %v", err)
		}
	})
	t.Run("detaching leaves the Cluster and its namespace", func(t *testing.T) {
		// The Cluster's namespace existed before: adopted, not relabeled.
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			t.Fatal(err)
		}
		ns := &corev1.Namespace{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, ns); err != nil {
			t.Fatal(err)
		}
		if ns.Annotations[clusternamespace.AdoptedAnnotation] != string(mc.UID) || ns.Annotations[clusternamespace.OwnerAnnotation] != "" {
			t.Errorf("namespace cluster1 has annotations %v, want it adopted for ManagedCluster cluster1 (UID %s)", ns.Annotations, mc.UID)
		}
		if got := podsecurity.LabelsOf(ns.Labels); len(got) > 0 {
			t.Errorf("the hub set Pod Security labels %v on the Cluster API namespace cluster1", got)
		}
		if err := hub.Delete(ctx, mc); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, "ManagedCluster cluster1 (UID "+string(mc.UID)+") gone", func(ctx context.Context) (bool, error) {
			now := &clusterv1.ManagedCluster{}
			err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, now)
			return apierrors.IsNotFound(err) || (err == nil && now.UID != mc.UID), client.IgnoreNotFound(err)
		})
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, ns); err != nil || !ns.DeletionTimestamp.IsZero() {
			t.Errorf("namespace cluster1 is deleted or being deleted (err %v)", err)
		}
		cl := &capiv1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "cluster1"}, cl); err != nil || !cl.DeletionTimestamp.IsZero() {
			t.Errorf("Cluster API Cluster cluster1/cluster1 is deleted or being deleted (err %v)", err)
		}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: imp.CAPIKubeconfigSecret("cluster1")}, &corev1.Secret{}); err != nil {
			t.Errorf("the Cluster's kubeconfig Secret: %v", err)
		}
		// The importer makes the Cluster's ManagedCluster again, whose
		// namespace it is then.
		framework.Eventually(ctx, t, pollTimeout, "namespace cluster1 adopted for the new ManagedCluster cluster1", func(ctx context.Context) (bool, error) {
			now := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, now); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, ns); err != nil {
				return false, err
			}
			return now.UID != mc.UID && ns.Annotations[clusternamespace.AdoptedAnnotation] == string(now.UID), nil
		})
	})
	t.Run("a Cluster in another namespace gets no ManagedCluster", func(t *testing.T) {
		err := hub.Get(ctx, client.ObjectKey{Name: "cluster9"}, &clusterv1.ManagedCluster{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("ManagedCluster cluster9 exists (err %v)", err)
		}
	})
}
