package addonmanager

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/install"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

const (
	// pollTimeout bounds every wait for the controllers; the garbage
	// collector may take its discovery period to notice the add-on kinds.
	pollTimeout = 90 * time.Second
	// addon is the add-on of the seed examples.
	addon = "helloworld"
	// configNamespace holds the configurations of the seed examples.
	configNamespace = "open-cluster-management"
	// fieldOwner is the server-side apply field manager of the tests.
	fieldOwner = "addonmanager-test"
)

// suite is one hub running the controllers under test.
type suite struct {
	ctx   context.Context
	admin client.Client
	hub   *framework.Cluster
}

// setup starts a hub, installs what `hub init` installs and runs the hub
// registration controllers, the placement scheduler and the add-on
// manager's install, config and rollout controllers as the hub controller's
// ServiceAccount. It binds the global cluster set to namespace default (the
// seeds' placements live there) and creates the seeds' configuration
// namespace unless `hub init` did.
func setup(t *testing.T) *suite {
	t.Helper()
	ctx, env := hubtest.Start(t, 15*time.Minute)
	hub := env.Cluster("hub")
	s := &suite{ctx: ctx, admin: hub.Client(), hub: hub}
	t.Cleanup(func() {
		if t.Failed() {
			s.dump(t)
		}
	})
	hubtest.RunControllers(t, hub, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		placement.SetupWithManager,
		func(mgr ctrl.Manager) error {
			return (&install.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		},
		func(mgr ctrl.Manager) error {
			return (&config.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
				Recorder: mgr.GetEventRecorder(config.ControllerName)}).SetupWithManager(mgr)
		},
		func(mgr ctrl.Manager) error {
			return (&rollout.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
		},
	)
	if err := s.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configNamespace}}); !apierrors.IsAlreadyExists(err) {
		kit.Must(t, "create namespace "+configNamespace, err)
	}
	kit.Must(t, "bind the global cluster set to default", s.admin.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "global"},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"},
	}))
	return s
}

// poll waits until cond holds, failing t with what when it never does.
func (s *suite) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(s.ctx, t, pollTimeout, what, cond)
}

// apply server-side applies objs as the hub admin.
func (s *suite) apply(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		err := s.admin.Apply(s.ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner(fieldOwner), client.ForceOwnership)
		kit.Must(t, fmt.Sprintf("apply %s %s", u.GetKind(), client.ObjectKeyFromObject(u)), err)
	}
}

// applySeed applies the seed example file unchanged.
func (s *suite) applySeed(t *testing.T, file string) {
	t.Helper()
	s.apply(t, seeds.Read(t, file)...)
}

// clusterSpec describes a managed cluster to register.
type clusterSpec struct {
	name        string
	labels      map[string]string
	claims      map[string]string
	annotations map[string]string
}

// cluster registers a managed cluster as `join` and `accept` would, without
// an agent: an accepted ManagedCluster with a long lease, whose namespace
// the registration controller creates, then Available with its claims, as
// its agent would report.
func (s *suite) cluster(t *testing.T, c clusterSpec) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels, Annotations: c.annotations},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 3600},
	}
	kit.Must(t, "create cluster "+c.name, s.admin.Create(s.ctx, mc))
	s.poll(t, "namespace of "+c.name, func(ctx context.Context) (bool, error) {
		return true, s.admin.Get(ctx, client.ObjectKey{Name: c.name}, &corev1.Namespace{})
	})
	s.updateCluster(t, c.name, func(mc *clusterv1.ManagedCluster) {
		for k, v := range c.claims {
			mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: v})
		}
		setAvailable(mc, metav1.ConditionTrue)
	})
}

// updateCluster changes the status of ManagedCluster name, retrying on conflicts.
func (s *suite) updateCluster(t *testing.T, name string, change func(*clusterv1.ManagedCluster)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := s.admin.Get(s.ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		change(mc)
		return s.admin.Status().Update(s.ctx, mc)
	})
	kit.Must(t, "update the status of cluster "+name, err)
}

// setAvailable sets the cluster's Available condition as its agent (True)
// or the hub's lease controller (Unknown) would.
func setAvailable(mc *clusterv1.ManagedCluster, status metav1.ConditionStatus) {
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: status,
		Reason: clusterv1.ReasonManagedClusterAvailable, Message: "set by the test",
	})
}

// mca reads the ManagedClusterAddOn of the add-on in cluster.
func (s *suite) mca(ctx context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	m := &addonv1alpha1.ManagedClusterAddOn{}
	return m, s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addon}, m)
}

// waitMCA waits until the add-on's ManagedClusterAddOn in cluster passes check.
func (s *suite) waitMCA(t *testing.T, cluster, what string, check func(*addonv1alpha1.ManagedClusterAddOn) error) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	var last *addonv1alpha1.ManagedClusterAddOn
	s.poll(t, cluster+": "+what, func(ctx context.Context) (bool, error) {
		m, err := s.mca(ctx, cluster)
		if err != nil {
			return false, err
		}
		last = m
		return true, check(m)
	})
	return last
}

// waitGone waits until the add-on has no ManagedClusterAddOn in cluster.
func (s *suite) waitGone(t *testing.T, cluster string) {
	t.Helper()
	s.poll(t, "no ManagedClusterAddOn in "+cluster, func(ctx context.Context) (bool, error) {
		_, err := s.mca(ctx, cluster)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("still there (%v)", err)
	})
}

// waitCMA waits until the add-on's ClusterManagementAddOn passes check.
func (s *suite) waitCMA(t *testing.T, what string, check func(*addonv1alpha1.ClusterManagementAddOn) error) *addonv1alpha1.ClusterManagementAddOn {
	t.Helper()
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	s.poll(t, "ClusterManagementAddOn: "+what, func(ctx context.Context) (bool, error) {
		if err := s.admin.Get(ctx, client.ObjectKey{Name: addon}, cma); err != nil {
			return false, err
		}
		return true, check(cma)
	})
	return cma
}

// condition returns an error unless conds has a condition typ of status and reason.
func condition(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) error {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil || c.Status != status || c.Reason != reason {
		return fmt.Errorf("%s is %+v, want %s %s", typ, c, status, reason)
	}
	return nil
}

// progression returns the Progressing condition of the install progression
// of placement default/name.
func progression(cma *addonv1alpha1.ClusterManagementAddOn, name string) (*metav1.Condition, error) {
	for _, ip := range cma.Status.InstallProgressions {
		if ip.Namespace == "default" && ip.Name == name {
			if c := meta.FindStatusCondition(ip.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil {
				return c, nil
			}
		}
	}
	return nil, fmt.Errorf("no Progressing condition for placement default/%s in %+v", name, cma.Status.InstallProgressions)
}

// deployConfig creates or updates the AddOnDeploymentConfig name in the
// configuration namespace with a customized variable and returns its spec hash.
func (s *suite) deployConfig(t *testing.T, name, value string) string {
	t.Helper()
	adc := &addonv1alpha1.AddOnDeploymentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "AddOnDeploymentConfig"},
		ObjectMeta: metav1.ObjectMeta{Namespace: configNamespace, Name: name},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "VALUE", Value: value}},
		},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(adc)
	kit.Must(t, "convert "+name, err)
	s.apply(t, &unstructured.Unstructured{Object: content})
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(addonconfig.BuiltinKind(addonv1alpha1.AddOnDeploymentConfigResource))
	kit.Must(t, "read "+name, s.admin.Get(s.ctx, client.ObjectKeyFromObject(adc), stored))
	hash, err := addonconfig.SpecHash(stored)
	kit.Must(t, "hash "+name, err)
	return hash
}

// desired returns the desired spec hash of the configuration name of kind
// resource in m's status, or an error naming what is there.
func desired(m *addonv1alpha1.ManagedClusterAddOn, resource, name string) (string, error) {
	for _, ref := range m.Status.ConfigReferences {
		if ref.Resource == resource && ref.DesiredConfig != nil && ref.DesiredConfig.Name == name {
			return ref.DesiredConfig.SpecHash, nil
		}
	}
	return "", fmt.Errorf("no desired %s %s in %+v", resource, name, m.Status.ConfigReferences)
}

// clientKey is the key of the cluster-scoped object name.
func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// dump logs the add-on's ClusterManagementAddOn and ManagedClusterAddOns, to
// explain a failure.
func (s *suite) dump(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := s.admin.Get(context.Background(), clientKey(addon), cma); err == nil {
		data, _ := yaml.Marshal(cma)
		t.Logf("ClusterManagementAddOn:\n%s", data)
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := s.admin.List(context.Background(), list); err == nil {
		for i := range list.Items {
			data, _ := yaml.Marshal(list.Items[i].Status)
			t.Logf("ManagedClusterAddOn %s/%s status:\n%s", list.Items[i].Namespace, list.Items[i].Name, data)
		}
	}
}
