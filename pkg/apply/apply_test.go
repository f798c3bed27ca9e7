package apply

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func obj(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

func TestSort(t *testing.T) {
	in := []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "d"),
		obj("cluster.open-cluster-management.io/v1", "ManagedCluster", "mc"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "crb"),
		obj("v1", "Namespace", "ns"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "cr"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "crd"),
		obj("v1", "ServiceAccount", "sa"),
		obj("v1", "Namespace", "ns2"),
	}
	want := []string{"crd", "ns", "ns2", "sa", "cr", "crb", "mc", "d"}
	got := Sort(in)
	for i, u := range got {
		if u.GetName() != want[i] {
			t.Fatalf("Sort order = %v, want %v", names(got), want)
		}
	}
	if in[0].GetName() != "d" {
		t.Error("Sort modified its input")
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestDescribe(t *testing.T) {
	ns := obj("v1", "ConfigMap", "c")
	ns.SetNamespace("n")
	if got := Describe(ns); got != "ConfigMap n/c" {
		t.Errorf("Describe = %q", got)
	}
	if got := Describe(obj("v1", "Namespace", "n")); got != "Namespace n" {
		t.Errorf("Describe = %q", got)
	}
}

func TestToUnstructured(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name    string
		obj     client.Object
		want    map[string]any
		wantErr string
	}{
		{"kind set, status and creationTimestamp dropped", &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "apps", CreationTimestamp: created},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		}, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "apps"}, "spec": map[string]any{}}, ""},
		{"a kind the scheme does not know", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil, "find the kind of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ToUnstructured(tt.obj, clientgoscheme.Scheme)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if !reflect.DeepEqual(u.Object, tt.want) {
				t.Errorf("ToUnstructured = %v, want %v", u.Object, tt.want)
			}
		})
	}
}
