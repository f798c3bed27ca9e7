package manager

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// deployConfigKind is the AddOnDeploymentConfig kind, at the version
// addon-framework reads and hashes it.
var deployConfigKind = addonv1beta1.GroupVersion.WithKind("AddOnDeploymentConfig")

// specHash reads the AddOnDeploymentConfig ref names and returns its spec
// hash as addon-framework computes it; found is false when it does not
// exist.
func specHash(ctx context.Context, c client.Reader, ref addonv1beta1.ConfigReferent) (hash string, generation int64, found bool, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(deployConfigKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return "", 0, false, nil
		}
		return "", 0, false, err
	}
	hash, err = addonconfig.SpecHash(u)
	return hash, u.GetGeneration(), err == nil, err
}

// supported reports whether gr is a configuration kind the add-on reads.
func supported(gr addonv1beta1.ConfigGroupResource) bool {
	return slices.Contains(SupportedConfigs, gr)
}

// byDeployConfig enqueues every object of list kind newList named as the
// add-on, in every namespace, when an AddOnDeploymentConfig changes; the
// reconcilers read each desired one again.
func byDeployConfig(c client.Reader, newList func() client.ObjectList, addon string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err == nil && o.GetName() == addon {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}})
			}
		}
		return out
	})
}

// addonConfigs writes what addon-framework's addon-config controller
// writes on a ManagedClusterAddOn: the observed generation of each desired
// configuration of a supported kind, and the spec hash of those the
// ManagedClusterAddOn lists in spec.configs.
type addonConfigs struct {
	client client.Client
	opts   Options
}

// setup watches the add-on's ManagedClusterAddOns and the AddOnDeploymentConfigs.
func (a *addonConfigs) setup(mgr ctrl.Manager) error {
	adc := &unstructured.Unstructured{}
	adc.SetGroupVersionKind(deployConfigKind)
	return ctrl.NewControllerManagedBy(mgr).Named(a.opts.AddonName+"-addon-config").
		For(&addonv1beta1.ManagedClusterAddOn{}, builder.WithPredicates(named(a.opts.AddonName))).
		Watches(adc, byDeployConfig(mgr.GetClient(), func() client.ObjectList { return &addonv1beta1.ManagedClusterAddOnList{} }, a.opts.AddonName)).
		Complete(a)
}

// Reconcile patches the status once, when something changed.
func (a *addonConfigs) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1beta1.ManagedClusterAddOn{}
	if err := a.client.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	updated := mca.DeepCopy()
	for i := range updated.Status.ConfigReferences {
		ref := &updated.Status.ConfigReferences[i]
		if !supported(ref.ConfigGroupResource) || ref.DesiredConfig == nil {
			continue
		}
		hash, generation, found, err := specHash(ctx, a.client, ref.DesiredConfig.ConfigReferent)
		if err != nil || !found {
			return ctrl.Result{}, err
		}
		ref.LastObservedGeneration = generation
		for _, c := range updated.Spec.Configs {
			if c.ConfigGroupResource == ref.ConfigGroupResource && c.ConfigReferent == ref.DesiredConfig.ConfigReferent {
				ref.DesiredConfig.SpecHash = hash
			}
		}
	}
	_, err := patchStatus(ctx, a.client, mca, updated, mca.Status, updated.Status)
	return ctrl.Result{}, wrap(err, "patch the configuration references")
}

// cmaConfigs writes what addon-framework's cma-config controller writes on
// the add-on's ClusterManagementAddOn: the spec hash of every default and
// install progression configuration of a supported kind.
type cmaConfigs struct {
	client client.Client
	opts   Options
}

// setup watches the add-on's ClusterManagementAddOn and the AddOnDeploymentConfigs.
func (a *cmaConfigs) setup(mgr ctrl.Manager) error {
	adc := &unstructured.Unstructured{}
	adc.SetGroupVersionKind(deployConfigKind)
	return ctrl.NewControllerManagedBy(mgr).Named(a.opts.AddonName+"-cma-config").
		For(&addonv1beta1.ClusterManagementAddOn{}, builder.WithPredicates(named(a.opts.AddonName))).
		Watches(adc, byDeployConfig(mgr.GetClient(), func() client.ObjectList { return &addonv1beta1.ClusterManagementAddOnList{} }, a.opts.AddonName)).
		Complete(a)
}

// Reconcile patches the status once, when something changed.
func (a *cmaConfigs) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cma := &addonv1beta1.ClusterManagementAddOn{}
	if err := a.client.Get(ctx, req.NamespacedName, cma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	updated := cma.DeepCopy()
	set := func(gr addonv1beta1.ConfigGroupResource, desired *addonv1beta1.ConfigSpecHash) error {
		if desired == nil || desired.Name == "" || !supported(gr) {
			return nil
		}
		hash, _, _, err := specHash(ctx, a.client, desired.ConfigReferent)
		desired.SpecHash = hash
		return err
	}
	for i := range updated.Status.DefaultConfigReferences {
		ref := &updated.Status.DefaultConfigReferences[i]
		if err := set(ref.ConfigGroupResource, ref.DesiredConfig); err != nil {
			return ctrl.Result{}, err
		}
	}
	for i := range updated.Status.InstallProgressions {
		for j := range updated.Status.InstallProgressions[i].ConfigReferences {
			ref := &updated.Status.InstallProgressions[i].ConfigReferences[j]
			if err := set(ref.ConfigGroupResource, ref.DesiredConfig); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	_, err := patchStatus(ctx, a.client, cma, updated, cma.Status, updated.Status)
	return ctrl.Result{}, wrap(err, "patch the ClusterManagementAddOn's configuration hashes")
}
