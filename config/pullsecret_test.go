package config

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// TestOperatorsReferencePullSecret checks that the operators' own
// Deployments, which `hub init` and `join` write, pull with the image pull
// Secret next to them.
func TestOperatorsReferencePullSecret(t *testing.T) {
	hub, err := HubOperatorObjects(HubOperatorValues{})
	if err != nil {
		t.Fatal(err)
	}
	klusterlet, err := KlusterletOperatorObjects(KlusterletOperatorValues{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, obj := range append(hub, klusterlet...) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		n++
		refs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "imagePullSecrets")
		if len(refs) != 1 || refs[0].(map[string]any)["name"] != pullsecret.Name {
			t.Errorf("Deployment %s/%s imagePullSecrets %v, want %s", obj.GetNamespace(), obj.GetName(), refs, pullsecret.Name)
		}
	}
	if n != 2 {
		t.Errorf("%d operator Deployments, want 2", n)
	}
}
