package clitest

import (
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManagers lists the entries of obj's managedFields as
// MANAGER/OPERATION, followed by /SUBRESOURCE for an entry of a subresource:
// "kubectl-ocm-work-create/Apply", "kubectl-ocm-accept/Update/approval".
func FieldManagers(obj client.Object) []string {
	var managers []string
	for _, f := range obj.GetManagedFields() {
		m := f.Manager + "/" + string(f.Operation)
		if f.Subresource != "" {
			m += "/" + f.Subresource
		}
		managers = append(managers, m)
	}
	return managers
}

// ExpectFieldManager fails t unless obj's managedFields have an entry want,
// spelled as FieldManagers spells them: the verb named in want wrote obj.
func ExpectFieldManager(t testing.TB, obj client.Object, want string) {
	t.Helper()
	if managers := FieldManagers(obj); !slices.Contains(managers, want) {
		t.Errorf("%T %s/%s: managed fields %v lack %s", obj, obj.GetNamespace(), obj.GetName(), managers, want)
	}
}
