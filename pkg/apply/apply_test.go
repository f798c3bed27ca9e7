package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
