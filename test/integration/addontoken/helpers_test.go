package addontoken

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/deploy"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/token"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	clusterName = "cluster1"
	otherName   = "cluster2"
	// pollTimeout bounds every wait.
	pollTimeout = 60 * time.Second
)

// suite is the environment shared by the subtests.
type suite struct {
	ctx          context.Context
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
}

// setup starts the hub and cluster1, installs what `hub init` and `join`
// install, accepts cluster1 and cluster2, and runs the hub controllers and
// cluster1's add-on agent with the token driver.
func setup(t *testing.T) *suite {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute, clusterName)
	s := &suite{ctx: ctx, hub: env.Cluster("hub"), spoke: env.Cluster(clusterName)}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()
	hubtest.RunControllers(t, s.hub, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		(&deploy.Reconciler{}).SetupWithManager, (&token.Reconciler{}).SetupWithManager)
	hubtest.AcceptClusters(ctx, t, s.hubC, clusterName, otherName)
	agenttest.Join(ctx, t, s.hub, s.spoke, config.AgentValues{ClusterName: clusterName,
		AddonKubeClientRegistrationAuth: addonv1alpha1.KubeClientDriverToken}, "agent1")
	agenttest.StartAddonAgent(t, s.spoke, addonagent.Options{KubeClientDriver: addonv1alpha1.KubeClientDriverToken})
	return s
}

// createAddon creates template add-on name, whose registration grants the
// ClusterRole role in the cluster's namespace, and enables it on cluster1
// with install namespace ns; it writes the desired template as the
// configuration controller would.
func (s *suite) createAddon(t *testing.T, name, role, ns string) {
	t.Helper()
	s.create(t, s.hubC, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}}})
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name + "-template"}}
	tpl.Spec.AddonName = name
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName(name + "-settings")
	cm.SetNamespace(addonv1alpha1.DefaultAddonInstallNamespace)
	raw, err := cm.MarshalJSON()
	kit.Must(t, "encode manifest", err)
	tpl.Spec.AgentSpec.Workload.Manifests = append(tpl.Spec.AgentSpec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{
			{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}},
		}}}}
	s.create(t, s.hubC, tpl)
	enabled := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}
	enabled.Spec.InstallNamespace = ns //nolint:staticcheck // as `addon enable -n` writes it; the add-on manager still honors it
	s.create(t, s.hubC, enabled)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("AddOnTemplate"))
	kit.Must(t, "read the template", s.hubC.Get(s.ctx, client.ObjectKey{Name: tpl.Name}, u))
	hash, err := addonconfig.SpecHash(u)
	kit.Must(t, "hash the template", err)
	referent := addonv1alpha1.ConfigReferent{Name: tpl.Name}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}
	s.update(t, mca, func() {
		mca.Status.ConfigReferences = []addonv1alpha1.ConfigReference{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
			ConfigReferent:      referent,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: hash},
		}}
	})
}

// createRole creates a ClusterRole that may read resource in the core group.
func (s *suite) createRole(t *testing.T, name, resource string) {
	t.Helper()
	s.create(t, s.hubC, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{"get", "list"}}}})
}

// waitSecret waits until the Secret <addon>-hub-kubeconfig in ns on
// cluster1 matches ok and returns it.
func (s *suite) waitSecret(t *testing.T, addon, ns string, ok func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	s.poll(t, "Secret "+ns+"/"+addon+"-hub-kubeconfig", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: addon + "-hub-kubeconfig"}, secret)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && ok(secret), err
	})
	return secret
}

// waitCondition waits until condition typ of add-on name on cluster1 is
// status with reason, and returns the add-on.
func (s *suite) waitCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	s.poll(t, "ManagedClusterAddOn "+name+" "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		if err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: name}, mca); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mca.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return mca
}

// update reads obj from the hub, applies change to its status and writes
// it, retrying conflicts with the controllers.
func (s *suite) update(t *testing.T, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.hubC.Get(s.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return s.hubC.Status().Update(s.ctx, obj)
	})
	kit.Must(t, "update "+obj.GetNamespace()+"/"+obj.GetName(), err)
}

// create creates obj as the admin.
func (s *suite) create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	kit.Must(t, "create "+obj.GetNamespace()+"/"+obj.GetName(), c.Create(s.ctx, obj))
}

// poll waits until cond holds.
func (s *suite) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(s.ctx, t, pollTimeout, what, cond)
}
