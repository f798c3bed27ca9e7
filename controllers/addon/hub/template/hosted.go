package template

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// HostedCredentialRoleName names the Role and RoleBinding that let the
// hosted agent of a cluster write the hub credential of addon in the
// add-on's install namespace on the hosting cluster.
func HostedCredentialRoleName(addon string) string {
	return "open-cluster-management:" + addon + ":hosted-agent-credential"
}

// hostedAgentGrant returns the Role and RoleBinding, in namespace on the
// hosting cluster, that let the hosted agent of cluster (its registration
// agent, which runs there in Hosted mode) write the add-on's hub credential
// Secret and read its Lease there. They travel in the hosting work, so the
// agent holds rights in the install namespaces of the add-ons it hosts
// only, and loses them with the add-on.
func hostedAgentGrant(cluster, addon, namespace string) ([]*unstructured.Unstructured, error) {
	name := HostedCredentialRoleName(addon)
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{identity.HostedAgentSubject(cluster)},
	}
	var out []*unstructured.Unstructured
	for _, obj := range []runtime.Object{role, binding} {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("%w: the hosted agent's grant: %w", ErrInvalidManifest, err)
		}
		unstructured.RemoveNestedField(content, "metadata", "creationTimestamp")
		out = append(out, &unstructured.Unstructured{Object: content})
	}
	return out, nil
}
