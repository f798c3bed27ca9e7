package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// NewSecretCache returns a cache, on the managed cluster managed, of the
// credential Secrets the agent of clusterName writes in every namespace (labeled
// open-cluster-management.io/cluster-name=<clusterName> and with an
// open-cluster-management.io/addon-name label), holding their metadata
// only: the registration controller watches them so that a deleted or
// changed credential is written again at once. It shares managed's HTTP
// client and REST mapper. The caller starts it.
func NewSecretCache(managed cluster.Cluster, clusterName string) (cache.Cache, error) {
	sel, err := labels.Parse(clusterv1.ClusterNameLabelKey + "=" + clusterName + "," + addonv1alpha1.AddonLabelKey)
	if err != nil {
		return nil, fmt.Errorf("select the add-on Secrets of cluster %q: %w", clusterName, err)
	}
	c, err := cache.New(managed.GetConfig(), cache.Options{
		Scheme:     apis.Scheme,
		HTTPClient: managed.GetHTTPClient(),
		Mapper:     managed.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: sel, Transform: func(obj any) (any, error) {
			if s, ok := obj.(*corev1.Secret); ok {
				s.Data, s.StringData, s.ManagedFields = nil, nil, nil
			}
			return obj, nil
		}}},
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of the add-on Secrets: %w", err)
	}
	return c, nil
}

// The agent watches the credential Secrets it writes, wherever the add-ons
// are installed, as OCM's agent may.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=watch

// watchSecrets makes c reconcile an add-on when one of its credential
// Secrets in secrets (NewSecretCache) is created, deleted or written; the
// pending requests are left out.
func (r *Reconciler) watchSecrets(c controller.Controller, secrets cache.Cache) error {
	// The cache holds no data: a new resource version tells a write.
	changed := predicate.TypedResourceVersionChangedPredicate[*corev1.Secret]{}
	toAddon := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Secret) []reconcile.Request {
		addon := s.Labels[addonv1alpha1.AddonLabelKey]
		if addon == "" || s.Labels[clusterv1.ClusterNameLabelKey] != r.Cluster || r.isPending(s) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Cluster, Name: addon}}}
	})
	if err := c.Watch(source.Kind(secrets, &corev1.Secret{}, toAddon, changed)); err != nil {
		return fmt.Errorf("watch the add-on Secrets: %w", err)
	}
	return nil
}
