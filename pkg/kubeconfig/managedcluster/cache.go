package managedcluster

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TrimCache sets the transforms of an agent's caches in o: every object is
// kept without its managedFields, which no agent reads, and Nodes only with
// what the ManagedCluster status reports of them (capacity, allocatable,
// schedulability), so that a cluster's hundreds of Nodes, with their image
// lists and conditions, are not held in memory. Objects are stored as
// transformed: a reader of another Node field must change it here.
func TrimCache(o *cache.Options) {
	o.DefaultTransform = cache.TransformStripManagedFields()
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	o.ByObject[&corev1.Node{}] = cache.ByObject{Transform: nodeCapacity}
}

// nodeCapacity keeps of a Node its identity, labels, schedulability,
// capacity and allocatable resources; it returns other objects (such as a
// tombstone) unchanged.
func nodeCapacity(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Generation: n.Generation,
			Labels: n.Labels, DeletionTimestamp: n.DeletionTimestamp,
		},
		Spec:   corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
		Status: corev1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable},
	}, nil
}
