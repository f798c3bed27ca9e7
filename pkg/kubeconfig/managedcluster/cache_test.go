package managedcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

func TestNodeCapacity(t *testing.T) {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")}
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")}
	full := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "n1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"zone": "a"},
			Annotations:   map[string]string{"big": "annotation"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.NodeSpec{Unschedulable: true, PodCIDR: "10.0.0.0/24"},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: allocatable,
			Images:     []corev1.ContainerImage{{Names: []string{"registry/image:v1"}, SizeBytes: 1 << 20}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "n1", Obj: full}
	tests := []struct {
		name string
		in   any
		want any
	}{
		{
			name: "a node keeps identity, labels, schedulability and resources",
			in:   full,
			want: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"zone": "a"}},
				Spec:       corev1.NodeSpec{Unschedulable: true},
				Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
			},
		},
		{name: "a tombstone is unchanged", in: tombstone, want: tombstone},
		{name: "another object is unchanged", in: &corev1.ConfigMap{}, want: &corev1.ConfigMap{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nodeCapacity(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTrimCache(t *testing.T) {
	o := crcache.Options{}
	TrimCache(&o)
	if o.DefaultTransform == nil {
		t.Error("no default transform")
	}
	if len(o.ByObject) != 1 {
		t.Fatalf("ByObject has %d entries, want the Node's", len(o.ByObject))
	}
	for obj, by := range o.ByObject {
		if _, ok := obj.(*corev1.Node); !ok || by.Transform == nil {
			t.Errorf("ByObject entry %T without the Node transform", obj)
		}
	}
}
