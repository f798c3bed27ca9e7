package token

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// RoleName returns the name of the Role (and of its RoleBinding) that lets
// the cluster's agent request tokens of addon's ServiceAccount, as OCM
// names it: <addon>-token-role.
func RoleName(addon string) string { return addon + "-token-role" }

// Objects returns the token infrastructure of addon on cluster, in the
// cluster's namespace: the ServiceAccount first, then the Role and its
// RoleBinding, without owner.
func Objects(cluster, addon string) []client.Object {
	labels := func() map[string]string {
		return map[string]string{
			addonv1alpha1.AddonNameLabelKey:           addon,
			addonv1alpha1.TokenInfrastructureLabelKey: "true",
			clusterv1.ClusterNameLabelKey:             cluster,
		}
	}
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: cluster, Name: name, Labels: labels()}
	}
	sa := identity.AddonServiceAccount(addon)
	return []client.Object{
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: om(sa)},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: om(RoleName(addon)),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{sa}, Verbs: []string{"create"},
			}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: om(RoleName(addon)),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RoleName(addon)},
			// The token identity is named whether or not the cluster
			// registered with the token driver: only the hub controller
			// mints its tokens, and this binding is checked only for
			// requests in the cluster namespace.
			Subjects: identity.AgentSubjects(cluster, true),
		},
	}
}
