package importer_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	capiv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/importer"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/capi"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
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
	fx := startCAPIImport(t)
	t.Run("the ManagedCluster waits for the control plane", fx.capiWaitsForControlPlane)
	t.Run("an initialized control plane imports the cluster", fx.capiImports)
	t.Run("only who may update a Cluster points a ManagedCluster at it", fx.capiPointers)
	t.Run("detaching leaves the Cluster and its namespace", fx.capiDetach)
	t.Run("a Cluster in another namespace gets no ManagedCluster", fx.capiOtherNamespace)
}

// startCAPIImport starts the fleet of TestImportFromClusterAPI, installs
// Cluster API's CRD after the importer started, publishes the hub's
// address, and provisions the Clusters cluster1/cluster1 (its control plane
// not yet initialized) and team-a/cluster9, both with cluster1's
// kubeconfig.
func startCAPIImport(t *testing.T) *importFixture {
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
	info, err := clusterinfo.New(f.Hub.Server(), f.CA)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, info); err != nil {
		t.Fatal(err)
	}
	// A Cluster whose ManagedCluster would be named after it from another
	// namespace: only a ManagedCluster that names it imports it.
	if err := capi.Provision(ctx, hub, "team-a", "cluster9", kit.ImportKubeconfig(t, spoke.RESTConfig()), true); err != nil {
		t.Fatal(err)
	}

	if err := capi.Provision(ctx, hub, "cluster1", "cluster1", kit.ImportKubeconfig(t, spoke.RESTConfig()), false); err != nil {
		t.Fatal(err)
	}
	return &importFixture{ctx: ctx, f: f, hub: hub, spoke: spoke}
}

// capiWaitsForControlPlane checks that the ManagedCluster waits for the
// control plane.
func (fx *importFixture) capiWaitsForControlPlane(t *testing.T) {
	ctx, hub := fx.ctx, fx.hub
	kit.WaitImportCondition(ctx, t, hub, "cluster1", metav1.ConditionFalse, imp.ReasonKubeConfigNotFound, "control plane is not initialized")
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
}

// capiImports checks that an initialized control plane imports the cluster.
func (fx *importFixture) capiImports(t *testing.T) {
	ctx, hub, f := fx.ctx, fx.hub, fx.f
	if err := capi.SetInitialized(ctx, hub, "cluster1", "cluster1"); err != nil {
		t.Fatal(err)
	}
	kit.WaitImportCondition(ctx, t, hub, "cluster1", metav1.ConditionTrue, imp.ReasonImportSucceed, "Installed the Klusterlet")
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
}

// capiPointers checks that only who may update a Cluster points a
// ManagedCluster at it.
func (fx *importFixture) capiPointers(t *testing.T) {
	ctx, hub, f := fx.ctx, fx.hub, fx.f
	// operator may create and update ManagedClusters, and update the
	// Cluster API Clusters of namespace team-b only.
	for name, rule := range map[string]rbacv1.PolicyRule{
		"operator-managedclusters": {APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"create", "get", "update"}},
		"operator-capi":            {APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"clusters"}, Verbs: []string{"update"}},
	} {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
		subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "operator"}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
		var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subjects}
		if name == "operator-capi" {
			binding = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: name}, RoleRef: ref, Subjects: subjects}
			if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, obj := range []client.Object{role, binding} {
			if err := hub.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := f.Hub.ConfigForUser("operator")
	if err != nil {
		t.Fatal(err)
	}
	operator, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	annotated := func(name, target string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{importer.CAPIAnnotation: target}}}
	}
	// team-a/cluster9 is initialized and its kubeconfig reaches cluster1:
	// pointing a new ManagedCluster at it would install a second agent there.
	framework.Eventually(ctx, t, pollTimeout, "operator's ManagedCluster pointing at team-a/cluster9 refused", func(ctx context.Context) (bool, error) {
		err := operator.Create(ctx, annotated("cluster8", "team-a/cluster9"))
		switch {
		case err == nil:
			t.Fatal("operator created ManagedCluster cluster8 pointing at Cluster team-a/cluster9")
		case apierrors.IsForbidden(err) && kit.ErrorSays(err, "of a Cluster that operator may update"):
			return true, nil
		}
		return false, err
	})
	for _, target := range []string{"team-a", "team-a/", "/cluster9", "team-a/cluster9/x"} {
		if err := operator.Create(ctx, annotated("cluster8", target)); !apierrors.IsForbidden(err) {
			t.Errorf("ManagedCluster annotated %s=%q: got %v, want Forbidden", importer.CAPIAnnotation, target, err)
		}
	}
	// A Cluster it may update: allowed, and changing it later is
	// checked again.
	mc := annotated("cluster7", "team-b/cluster7")
	if err := operator.Create(ctx, mc); err != nil {
		t.Fatalf("operator points ManagedCluster cluster7 at team-b/cluster7, which it may update: %v", err)
	}
	defer func() { _ = hub.Delete(ctx, mc) }()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := &clusterv1.ManagedCluster{}
		if err := operator.Get(ctx, client.ObjectKeyFromObject(mc), fresh); err != nil {
			return err
		}
		fresh.Annotations[importer.CAPIAnnotation] = "team-a/cluster9"
		return operator.Update(ctx, fresh)
	})
	if !apierrors.IsForbidden(err) {
		t.Errorf("operator repoints cluster7 at team-a/cluster9: got %v, want Forbidden", err)
	}
}

// capiDetach checks that detaching leaves the Cluster and its namespace.
func (fx *importFixture) capiDetach(t *testing.T) {
	ctx, hub := fx.ctx, fx.hub
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
}

// capiOtherNamespace checks that a Cluster in another namespace gets no
// ManagedCluster.
func (fx *importFixture) capiOtherNamespace(t *testing.T) {
	ctx, hub := fx.ctx, fx.hub
	err := hub.Get(ctx, client.ObjectKey{Name: "cluster9"}, &clusterv1.ManagedCluster{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ManagedCluster cluster9 exists (err %v)", err)
	}
}
