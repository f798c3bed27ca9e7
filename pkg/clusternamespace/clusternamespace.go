// Package clusternamespace is the one rule by which the hub tells the
// namespace of a ManagedCluster, which it may bind the cluster's agent in,
// relabel and delete with the cluster, from a namespace of the same name that
// is someone else's. A cluster's name is chosen by whoever registers it, a
// bootstrap-token holder included, so a name alone proves nothing: the hub
// creates the cluster namespace itself and marks it with the UID of the
// ManagedCluster (OwnerAnnotation), the hub's importer marks an existing
// namespace it imports a cluster into (AdoptedAnnotation), and an
// administrator may prepare a namespace for a cluster that has not
// registered yet (PreparedAnnotation). The hub controller (accepting and
// deleting a cluster), the importer and `kubectl ocm import` follow it.
//
// Only who may create or update namespaces (a hub administrator, the hub
// controller, the importer) writes a mark; an agent or a bootstrap-token holder
// writes no namespace.
package clusternamespace

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// HubFieldManager is the field manager of the hub controller's writes,
// the hubFieldManager that the hub controller and the importer pass to Of.
const HubFieldManager = "ocm-hub-controller"

// The marks of a cluster namespace. Their value is the UID of the
// ManagedCluster, which a cluster deleted and registered again under the
// same name does not share.
const (
	// OwnerAnnotation marks a namespace created for the ManagedCluster whose
	// UID is its value, by the hub controller or `kubectl ocm import`: the
	// hub binds the cluster's agent there, sets its Pod Security labels
	// (pkg/podsecurity) and deletes it, with everything in it, when the
	// cluster is deleted.
	OwnerAnnotation = "kubectl-ocm.io/cluster-namespace-of"
	// AdoptedAnnotation marks a namespace that existed before and is used
	// as the namespace of the ManagedCluster whose UID is its value: the
	// importer writes it on the namespace of a Cluster API Cluster (OCM's
	// convention: Cluster cluster2/cluster2 for ManagedCluster cluster2) and
	// on the namespace that held a cluster's import Secret; an
	// administrator may write it too. The hub binds the cluster's agent
	// there, but never changes the namespace's labels and never deletes it.
	AdoptedAnnotation = "kubectl-ocm.io/cluster-namespace-adopted-for"
	// PreparedAnnotation marks a namespace an administrator creates ahead
	// of a cluster that has not registered yet (a standby hub's, holding
	// its ManifestWorks before a failover), for the cluster of the name
	// that is its value: the first ManagedCluster of that name the hub
	// accepts adopts it (the hub replaces the annotation with
	// AdoptedAnnotation and that cluster's UID). With auto-approval, that
	// is whoever registers the name first.
	PreparedAnnotation = "kubectl-ocm.io/cluster-namespace-for"
)

// Standing is what a namespace is to the ManagedCluster of its name.
type Standing int

// The standings of a namespace.
const (
	// Foreign: someone else's namespace, or another ManagedCluster's of
	// the same name. The hub writes nothing into it and never deletes it.
	Foreign Standing = iota
	// Owned: created for this cluster (OwnerAnnotation, or unmarked by an
	// earlier release of the hub).
	Owned
	// Adopted: used for this cluster as it is (AdoptedAnnotation).
	Adopted
	// Prepared: created ahead for the cluster of this name
	// (PreparedAnnotation), to be adopted when it is accepted.
	Prepared
)

// Of returns the standing of ns to cluster, the ManagedCluster of its name.
// hubFieldManager is the field manager of the hub controller, by which
// a namespace that an earlier release created unmarked is recognized: the
// hub controller applied its cluster-name label, as its managed fields
// record, and it was created with the cluster or after it.
func Of(ns *corev1.Namespace, cluster metav1.Object, hubFieldManager string) Standing {
	uid := string(cluster.GetUID())
	owner, owned := ns.Annotations[OwnerAnnotation]
	adopter, adopted := ns.Annotations[AdoptedAnnotation]
	switch {
	case owned && owner == uid:
		return Owned
	case adopted && adopter == uid && !owned:
		return Adopted
	case !owned && !adopted && ns.Annotations[PreparedAnnotation] == cluster.GetName():
		return Prepared
	case !owned && !adopted && legacy(ns, cluster, hubFieldManager):
		return Owned
	}
	return Foreign
}

// New renders the namespace of cluster as the hub creates it: labeled with
// the cluster name, enforcing restricted Pod Security (it holds the
// cluster's works, add-ons and leases, never Pods) set by the hub
// (podsecurity.SetByAnnotation), and, when uid is set, marked as the own
// namespace of the ManagedCluster of that UID (OwnerAnnotation).
func New(cluster string, uid types.UID) *corev1.Namespace {
	ns := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster,
			Labels:      podsecurity.WithLabels(map[string]string{clusterv1.ClusterNameLabelKey: cluster}),
			Annotations: map[string]string{podsecurity.SetByAnnotation: podsecurity.SetByHub}},
	}
	if uid != "" {
		ns.Annotations[OwnerAnnotation] = string(uid)
	}
	return ns
}

// AdoptionPatch is the merge patch by which the importer, or the hub for a
// Prepared namespace, adopts an existing namespace for the ManagedCluster
// cluster: AdoptedAnnotation with its UID in place of any
// PreparedAnnotation (so that a later cluster of the same name does not
// take it), and the cluster-name label by which the hub controller caches
// and watches cluster namespaces. It changes nothing else, no Pod Security
// label above all.
func AdoptionPatch(cluster metav1.Object) []byte {
	p, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{AdoptedAnnotation: string(cluster.GetUID()), PreparedAnnotation: nil},
		"labels":      map[string]string{clusterv1.ClusterNameLabelKey: cluster.GetName()},
	}})
	return p
}

// legacySkew is how much earlier than its ManagedCluster a namespace an
// earlier release labeled may have been created and still count as made
// for it: `kubectl ocm import` wrote the namespace just before the
// ManagedCluster.
const legacySkew = time.Minute

// legacy reports whether ns, carrying neither mark, is the namespace an
// earlier release of the hub set up for cluster before the hub marked its
// namespaces: the hub controller (hubFieldManager) applied the
// cluster-name label with the cluster's name, as its managed fields
// record, and ns was created with the cluster or after it. A namespace
// older than the cluster was not made for it, even if an earlier release
// applied its labels over it: that was a name collision.
func legacy(ns *corev1.Namespace, cluster metav1.Object, hubFieldManager string) bool {
	if ns.Labels[clusterv1.ClusterNameLabelKey] != cluster.GetName() || !slices.Contains(podsecurity.LabelsSetBy(ns, hubFieldManager), clusterv1.ClusterNameLabelKey) {
		return false
	}
	created := cluster.GetCreationTimestamp().Add(-legacySkew)
	return !ns.CreationTimestamp.Time.Before(created)
}

// Conflict says why ns, whose standing to cluster is Foreign, is not
// cluster's namespace, and how an administrator resolves it.
func Conflict(ns *corev1.Namespace, cluster metav1.Object) string {
	name, uid := ns.Name, cluster.GetUID()
	fix := fmt.Sprintf("If namespace %s is meant to be this cluster's namespace, mark it with `kubectl annotate namespace %s %s=%s` (the hub then binds the cluster's agent there, and leaves the namespace when the cluster is deleted); "+
		"if the cluster is unexpected, delete the ManagedCluster: the namespace is left as it is", name, name, AdoptedAnnotation, uid)
	var why string
	switch owner, adopter := ns.Annotations[OwnerAnnotation], ns.Annotations[AdoptedAnnotation]; {
	case owner != "":
		why = fmt.Sprintf("namespace %s is the namespace of an earlier ManagedCluster %s (UID %s, annotation %s), not of this one (UID %s)", name, name, owner, OwnerAnnotation, uid)
		fix = fmt.Sprintf("Delete namespace %s once nothing in it is needed; the hub then creates this cluster's namespace", name)
	case adopter != "":
		why = fmt.Sprintf("namespace %s is adopted for another ManagedCluster %s (UID %s, annotation %s), not for this one (UID %s)", name, name, adopter, AdoptedAnnotation, uid)
	default:
		why = fmt.Sprintf("namespace %s exists and was not created for this cluster (it has no annotation %s=%s)", name, OwnerAnnotation, uid)
	}
	return fmt.Sprintf("%s: the hub neither binds the cluster's agent in it nor changes or deletes it. %s.", why, fix)
}
