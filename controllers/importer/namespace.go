package importer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
)

// The namespace of a cluster imported into an existing namespace is marked
// as adopted for the cluster.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;patch

// adoptNamespace marks the namespace of cluster's name, which holds what
// an administrator gave the importer for that cluster (its import Secret,
// which only who may update the ManagedCluster writes, or its Cluster API
// Cluster), as adopted for the cluster (clusternamespace.AdoptedAnnotation):
// the hub then binds the cluster's agent there, and never relabels nor
// deletes the namespace. An adoption for an earlier ManagedCluster of the
// name (the importer creates the ManagedCluster of a Cluster API Cluster
// again after it was deleted) is replaced: the same evidence holds for the
// cluster of that name now. A namespace the hub created, for this cluster
// or another, or one being deleted, is left as it is; the hub controller
// reports the conflict.
func (r *Reconciler) adoptNamespace(ctx context.Context, cluster *clusterv1.ManagedCluster) error {
	ns := &corev1.Namespace{}
	if err := r.reader.Get(ctx, types.NamespacedName{Name: cluster.Name}, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !ns.DeletionTimestamp.IsZero() || ns.Annotations[clusternamespace.OwnerAnnotation] != "" ||
		clusternamespace.Of(ns, cluster, clusternamespace.HubFieldManager) != clusternamespace.Foreign {
		return nil
	}
	p := client.RawPatch(types.MergePatchType, clusternamespace.AdoptionPatch(cluster))
	if err := r.Patch(ctx, ns, p, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("adopt namespace %s for cluster %s: %w", ns.Name, cluster.Name, err)
	}
	r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, "NamespaceAdopted", "Import",
		"Namespace %s, which existed before, is the cluster's namespace (annotation %s); the hub never deletes it", ns.Name, clusternamespace.AdoptedAnnotation)
	return nil
}
