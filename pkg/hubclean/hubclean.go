// Package hubclean is the one rule by which a hub is removed, shared by the
// ClusterManager operator (deleting the ClusterManager) and `kubectl ocm hub
// clean`: refuse while ManagedClusters remain unless forced, then delete
// them, then remove the cluster-bound bootstrap identities and the installed
// objects in reverse install order.
package hubclean

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Clusters returns the ManagedClusters on the hub, sorted by name; none
// when their CRD is already gone.
func Clusters(ctx context.Context, c client.Reader) ([]clusterv1.ManagedCluster, error) {
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1.ManagedCluster) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// Names returns the names of clusters.
func Names(clusters []clusterv1.ManagedCluster) []string {
	names := make([]string, 0, len(clusters))
	for i := range clusters {
		names = append(names, clusters[i].Name)
	}
	return names
}

// RefusalMessage says why the hub is not removed while clusters remain;
// force says how to remove it anyway.
func RefusalMessage(clusters []clusterv1.ManagedCluster, force string) string {
	names := Names(clusters)
	return fmt.Sprintf("%d managed clusters are still registered (%v): unjoin them (`kubectl ocm unjoin` on each), or %s to delete them", len(names), names, force)
}

// DeleteClusters deletes clusters, except those already being deleted,
// calling deleted for each. The hub controller then cleans up after each
// (its namespace, RBAC, works) and lets it go.
func DeleteClusters(ctx context.Context, c client.Client, clusters []clusterv1.ManagedCluster, deleted func(name string)) error {
	for i := range clusters {
		if !clusters[i].DeletionTimestamp.IsZero() {
			continue
		}
		if err := c.Delete(ctx, &clusters[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ManagedCluster %s: %w", clusters[i].Name, err)
		}
		deleted(clusters[i].Name)
	}
	return nil
}

// RemoveEarlierClusterBootstrap deletes what earlier releases created for
// the cluster-bound bootstrap identities and this one does not: a
// ClusterRoleBinding of the bootstrap role per cluster
// (open-cluster-management:bootstrap:<cluster>), and the ServiceAccount it
// bound, in identity.BootstrapNamespace. Both carry the cluster-bootstrap
// component label; the ServiceAccounts of identity.ClusterBootstrapNamespace,
// which carry it too, stay. It calls removed for each object it deleted.
// The ClusterManager operator calls it whenever it applies the hub, and
// Remove when it removes one. The tokens of those ServiceAccounts stop
// working: a cluster still to register with one needs a new token (`kubectl
// ocm hub token --cluster-name`).
func RemoveEarlierClusterBootstrap(ctx context.Context, c client.Client, removed func(client.Object)) error {
	labels := client.MatchingLabels{apply.PartOfLabelKey: apply.PartOfLabelValue, apply.ComponentLabelKey: apply.ClusterBootstrapComponent}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := c.List(ctx, bindings, labels); err != nil {
		return fmt.Errorf("list the bindings of cluster-bound bootstrap identities: %w", err)
	}
	accounts := &corev1.ServiceAccountList{}
	if err := c.List(ctx, accounts, labels, client.InNamespace(identity.BootstrapNamespace)); err != nil {
		return fmt.Errorf("list the cluster-bound bootstrap ServiceAccounts of namespace %s: %w", identity.BootstrapNamespace, err)
	}
	objs := make([]client.Object, 0, len(bindings.Items)+len(accounts.Items))
	for i := range bindings.Items {
		bindings.Items[i].SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"))
		objs = append(objs, &bindings.Items[i])
	}
	for i := range accounts.Items {
		accounts.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
		objs = append(objs, &accounts.Items[i])
	}
	for _, obj := range objs {
		uid := obj.GetUID()
		if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), err)
		}
		removed(obj)
	}
	return nil
}

// Remove deletes what earlier releases created for the cluster-bound
// bootstrap identities (RemoveEarlierClusterBootstrap; this release's go
// with their namespace) and the hub tunnel's APIService, which the hub
// controller registers (an APIService whose server is gone would hold the
// deletion of every namespace), then objs in reverse install order, calling
// removed for each object it deleted. Objects already gone and kinds the hub no
// longer serves are skipped.
func Remove(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, removed func(client.Object)) error {
	if err := RemoveEarlierClusterBootstrap(ctx, c, removed); err != nil {
		return err
	}
	tunnel := &unstructured.Unstructured{}
	tunnel.SetAPIVersion("apiregistration.k8s.io/v1")
	tunnel.SetKind("APIService")
	tunnel.SetName(hubtunnel.APIServiceName)
	switch err := c.Delete(ctx, tunnel.DeepCopy()); {
	case err == nil:
		removed(tunnel)
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
	default:
		return fmt.Errorf("remove APIService %s: %w", hubtunnel.APIServiceName, err)
	}
	sorted := apply.Sort(objs)
	slices.Reverse(sorted)
	for _, obj := range sorted {
		err := c.Delete(ctx, obj.DeepCopy())
		switch {
		case err == nil:
			removed(obj)
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			return fmt.Errorf("remove %s: %w", apply.Describe(obj), err)
		}
	}
	return nil
}

// RemainingCRDs returns the names of the CustomResourceDefinitions among
// objs that still exist: after Remove, those the API server is still
// removing together with their custom resources. Until they are gone the hub
// is not gone: installing it again would fail on a terminating CRD.
func RemainingCRDs(ctx context.Context, c client.Reader, objs []*unstructured.Unstructured) ([]string, error) {
	var left []string
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		switch err := c.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); {
		case err == nil:
			left = append(left, obj.GetName())
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("get CustomResourceDefinition %s: %w", obj.GetName(), err)
		}
	}
	return left, nil
}

// Without returns objs without those also in others (same kind, namespace
// and name): what the operator installed, less what installs the operator.
func Without(objs, others []*unstructured.Unstructured) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool {
		return slices.ContainsFunc(others, func(x *unstructured.Unstructured) bool {
			return x.GroupVersionKind().GroupKind() == o.GroupVersionKind().GroupKind() && x.GetNamespace() == o.GetNamespace() && x.GetName() == o.GetName()
		})
	})
}
