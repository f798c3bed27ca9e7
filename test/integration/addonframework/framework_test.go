package addonframework

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	addonhub "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	hellomanager "github.com/kubectl-ocm/kubectl-ocm/examples/addons/hellomanager/manager"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// The clusters: the agent of csrCluster obtains add-on credentials with the
// csr driver, the one of tokenCluster with the token driver.
const (
	csrCluster   = "cluster1"
	tokenCluster = "cluster2"
)

// The add-ons: managed is installed and rolled out by the hub (no
// lifecycle annotation), self by its own installer (lifecycle self).
const (
	managed = hellomanager.DefaultAddonName
	self    = "hellomanager-self"
)

// Where the agents run: managed's AddOnDeploymentConfig installs it in
// namespace hellomanager; self has no configuration and takes
// addon-framework's default.
var installNamespaces = map[string]string{managed: "hellomanager", self: hellomanager.DefaultInstallNamespace}

// managerNS and managerSA are the manager's namespace and ServiceAccount on
// the hub, from examples/addons/hellomanager/manager.yaml.
const (
	managerNS = "open-cluster-management-hellomanager"
	managerSA = "hellomanager"
)

// idleWindow is how long settled add-ons are watched for writes;
// maxReported is how many of those writes are logged.
const (
	idleWindow  = 30 * time.Second
	maxReported = 10
)

// TestFrameworkManagedAddons runs an addon-framework manager for both
// lifecycles against two clusters, one per kube-client driver: each add-on
// registers, its agent is deployed by the manager's ManifestWork and
// applied by our work agent, gets a hub credential from our agent that
// reads its cluster's namespace on the hub, and turns Available; then no
// ManagedClusterAddOn or ClusterManagementAddOn is written for idleWindow.
func TestFrameworkManagedAddons(t *testing.T) {
	ctx, env := hubtest.Start(t, 10*time.Minute, csrCluster, tokenCluster)
	hub := env.Cluster("hub")
	admin := hub.Client()
	hubtest.RunControllers(t, hub, 1,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		func(mgr ctrl.Manager) error { return addonhub.SetupWithManager(mgr, addonhub.Options{}) })
	hubtest.AcceptClusters(ctx, t, admin, csrCluster, tokenCluster)
	drivers := map[string]string{csrCluster: addonv1alpha1.KubeClientDriverCSR, tokenCluster: addonv1alpha1.KubeClientDriverToken}
	for cluster, driver := range drivers {
		spoke := env.Cluster(cluster)
		agenttest.Join(ctx, t, hub, spoke, config.AgentValues{ClusterName: cluster}, "agent-"+cluster)
		agenttest.StartWorkAgent(t, spoke, workagent.Options{StatusSyncInterval: time.Second})
		agenttest.StartAddonAgent(t, spoke, addonagent.Options{KubeClientDriver: driver})
	}
	agentBin := framework.BuildForTest(t, "./examples/addons/helloworld/agent", "helloworld-addon")
	runner.StartForTest(t, map[string]string{"helloworld-addon": agentBin}, env.Cluster(csrCluster), env.Cluster(tokenCluster))

	startManager(ctx, t, hub, managed, self)
	applyExample(ctx, t, admin, "clustermanagementaddon.yaml")
	selfCMA := createSelfManaged(ctx, t, admin)
	for cluster := range drivers {
		enable := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: managed}}
		kit.Must(t, "enable "+managed+" on "+cluster, admin.Create(ctx, enable))
		installSelfManaged(ctx, t, admin, cluster, selfCMA)
	}

	for _, addon := range []string{managed, self} {
		for cluster, driver := range drivers {
			t.Run(addon+" on "+cluster+" ("+driver+")", func(t *testing.T) {
				expectAvailable(ctx, t, admin, cluster, addon, driver)
				expectCredential(ctx, t, env.Cluster(cluster).Client(), cluster, addon, driver)
			})
		}
	}
	t.Run("agents read their cluster's namespace on the hub", func(t *testing.T) {
		for cluster := range drivers {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "greeting"}, Data: map[string]string{"value": "hello " + cluster}}
			kit.Must(t, "create ConfigMap greeting in "+cluster, admin.Create(ctx, cm))
		}
		for cluster := range drivers {
			for _, addon := range []string{managed, self} {
				ns := installNamespaces[addon]
				framework.Eventually(ctx, t, time.Minute, "ConfigMap greeting copied to "+cluster+"/"+ns+" by "+addon, func(ctx context.Context) (bool, error) {
					cm := &corev1.ConfigMap{}
					err := env.Cluster(cluster).Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeting"}, cm)
					return err == nil && cm.Data["value"] == "hello "+cluster, client.IgnoreNotFound(err)
				})
			}
		}
	})
	t.Run("no writes while idle", func(t *testing.T) {
		expectIdle(ctx, t, hub, &addonv1beta1.ManagedClusterAddOnList{}, &addonv1beta1.ClusterManagementAddOnList{})
	})
}

// startManager creates the manager's namespace, ServiceAccount and rights
// from the example's manifests (all but its Deployment) and runs, as that
// ServiceAccount, one manager for the add-ons named.
func startManager(ctx context.Context, t *testing.T, hub *framework.Cluster, addons ...string) {
	t.Helper()
	applyExample(ctx, t, hub.Client(), "manager.yaml", "Deployment")
	cfg, err := hub.ConfigForServiceAccount(ctx, managerNS, managerSA, time.Hour)
	kit.Must(t, "credentials of the add-on manager", err)
	cfg.UserAgent = "hellomanager"
	runCtx, cancel := context.WithCancel(context.Background())
	hubtest.RunManager(runCtx, t, cancel, cfg, manager.Options{}, 1, "add-on manager", func(mgr ctrl.Manager) error {
		for _, addon := range addons {
			if err := hellomanager.Setup(mgr, hellomanager.Options{AddonName: addon, AgentName: "conformance"}); err != nil {
				return err
			}
		}
		return nil
	})
}

// applyExample applies, as admin, the objects of the hellomanager example's
// manifest file except those of the kinds skipped.
func applyExample(ctx context.Context, t *testing.T, admin client.Client, file string, skipped ...string) {
	t.Helper()
	root, err := framework.RepoRoot()
	kit.Must(t, "find the repository", err)
	data, err := os.ReadFile(filepath.Join(root, "examples", "addons", "hellomanager", file))
	kit.Must(t, "read "+file, err)
	objs, err := config.DecodeDocuments(data)
	kit.Must(t, "decode "+file, err)
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if !slices.Contains(skipped, o.GetKind()) {
			keep = append(keep, o)
		}
	}
	kit.Must(t, "apply "+file, apply.Apply(ctx, admin, keep, apply.Options{FieldManager: "conformance"}))
}

// createSelfManaged creates the self-managed add-on's ClusterManagementAddOn
// at v1beta1, as its manager's installation does, and returns it.
func createSelfManaged(ctx context.Context, t *testing.T, admin client.Client) *addonv1beta1.ClusterManagementAddOn {
	t.Helper()
	cma := &addonv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: self,
		Annotations: map[string]string{addonv1alpha1.AddonLifecycleAnnotationKey: addonv1alpha1.AddonLifecycleSelfManageAnnotationValue}}}
	cma.Spec.AddOnMeta.DisplayName = self
	cma.Spec.InstallStrategy.Type = "Manual"
	kit.Must(t, "create ClusterManagementAddOn "+self, admin.Create(ctx, cma))
	return cma
}

// installSelfManaged creates the self-managed add-on's ManagedClusterAddOn
// on cluster at v1beta1, owned by its ClusterManagementAddOn, as its
// installer does.
func installSelfManaged(ctx context.Context, t *testing.T, admin client.Client, cluster string, cma *addonv1beta1.ClusterManagementAddOn) {
	t.Helper()
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: self,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cma, addonv1beta1.GroupVersion.WithKind("ClusterManagementAddOn"))}}}
	kit.Must(t, "install "+self+" on "+cluster, admin.Create(ctx, mca))
}

// expectAvailable waits until the add-on on cluster, read at v1beta1 as its
// manager reads it, is registered with the cluster's driver, applied and
// Available.
func expectAvailable(ctx context.Context, t *testing.T, admin client.Client, cluster, addon, driver string) {
	t.Helper()
	var last string
	framework.Eventually(ctx, t, 2*time.Minute, addon+" Available on "+cluster, func(ctx context.Context) (bool, error) {
		mca := &addonv1beta1.ManagedClusterAddOn{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addon}, mca); err != nil {
			return false, err
		}
		last = describe(mca)
		return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied) &&
			meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied) &&
			meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) &&
			kubeClientDriver(mca) == driver, nil
	})
	t.Logf("%s on %s: %s", addon, cluster, last)
}

// kubeClientDriver is the driver of mca's kubeClient registration.
func kubeClientDriver(mca *addonv1beta1.ManagedClusterAddOn) string {
	for _, r := range mca.Status.Registrations {
		if r.Type == addonv1beta1.KubeClient && r.KubeClient != nil {
			return r.KubeClient.Driver
		}
	}
	return ""
}

// describe summarizes mca's conditions and registrations.
func describe(mca *addonv1beta1.ManagedClusterAddOn) string {
	s := fmt.Sprintf("namespace %q;", mca.Status.Namespace)
	for _, r := range mca.Status.Registrations {
		if r.KubeClient != nil {
			s += fmt.Sprintf(" registration %s driver %q user %q;", r.Type, r.KubeClient.Driver, r.KubeClient.Subject.User)
		}
	}
	for _, c := range mca.Status.Conditions {
		s += fmt.Sprintf(" %s=%s (%s)", c.Type, c.Status, c.Reason)
	}
	return s
}

// expectCredential checks the add-on's hub credential Secret on cluster:
// a client certificate with the csr driver, a token with the token driver.
func expectCredential(ctx context.Context, t *testing.T, spoke client.Client, cluster, addon, driver string) {
	t.Helper()
	secret := &corev1.Secret{}
	kit.Must(t, "read the hub credential of "+addon, spoke.Get(ctx, client.ObjectKey{Namespace: installNamespaces[addon], Name: addon + "-hub-kubeconfig"}, secret))
	key := "tls.crt"
	if driver == addonv1alpha1.KubeClientDriverToken {
		key = "token"
	}
	if len(secret.Data["kubeconfig"]) == 0 || len(secret.Data[key]) == 0 || string(secret.Data["cluster-name"]) != cluster {
		t.Errorf("Secret %s/%s holds keys %v, cluster-name %q; want kubeconfig and %s for cluster %s",
			secret.Namespace, secret.Name, slices.Sorted(maps.Keys(secret.Data)), secret.Data["cluster-name"], key, cluster)
	}
}

// expectIdle watches the objects of the lists' kinds in every namespace
// for idleWindow and fails t on any write: every writer has settled.
func expectIdle(ctx context.Context, t *testing.T, hub *framework.Cluster, lists ...client.ObjectList) {
	t.Helper()
	c, err := client.NewWithWatch(hub.RESTConfig(), client.Options{Scheme: apis.Scheme})
	kit.Must(t, "watch client", err)
	events := make(chan watch.Event)
	for _, list := range lists {
		kit.Must(t, fmt.Sprintf("list %T", list), c.List(ctx, list))
		w, err := c.Watch(ctx, list, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.(metav1.ListInterface).GetResourceVersion()}})
		kit.Must(t, fmt.Sprintf("watch %T", list), err)
		defer w.Stop()
		go func() {
			for ev := range w.ResultChan() {
				select {
				case events <- ev:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	timer := time.NewTimer(idleWindow)
	defer timer.Stop()
	writes := 0
	for {
		select {
		case <-timer.C:
			if writes > 0 {
				t.Errorf("%d writes in %s once the add-ons settled: a writer keeps rewriting them", writes, idleWindow)
			}
			return
		case ev := <-events:
			o, ok := ev.Object.(client.Object)
			if !ok || ev.Type == watch.Bookmark {
				continue
			}
			if writes++; writes <= maxReported {
				t.Logf("%s %T %s/%s while idle (resourceVersion %s)", ev.Type, o, o.GetNamespace(), o.GetName(), o.GetResourceVersion())
			}
		}
	}
}
