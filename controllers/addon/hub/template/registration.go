package template

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// AgentName returns the agent name of a template add-on in its default
// certificate subject, as OCM names it: <addon>-agent.
func AgentName(addon string) string { return addon + "-agent" }

// Registrations returns the status.registrations of the add-on on cluster
// for the template's registrations, as OCM computes them: one
// kube-apiserver-client registration for the KubeClient registrations, with
// the default subject, or the token driver's subject
// (registration.TokenSubject) when the agent reports kubeClientDriver
// token; and one per custom signer, with its subject or the default one.
// The token subject is computed, not copied from the status the agent
// writes, so that the agent cannot name another identity.
func Registrations(cluster, addon, kubeClientDriver string, t *addonv1alpha1.AddOnTemplate) []addonv1alpha1.RegistrationConfig {
	defaultSubject := func() addonv1alpha1.Subject {
		return addonv1alpha1.Subject{
			User:   identity.AddonUserName(cluster, addon, AgentName(addon)),
			Groups: identity.AddonDefaultGroups(cluster, addon),
		}
	}
	out := []addonv1alpha1.RegistrationConfig{}
	seen := map[string]bool{}
	for _, r := range t.Spec.Registration {
		var rc addonv1alpha1.RegistrationConfig
		switch {
		case r.Type == addonv1alpha1.RegistrationTypeKubeClient:
			rc = addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName, Subject: defaultSubject()}
			if kubeClientDriver == addonv1alpha1.KubeClientDriverToken {
				rc.Subject = registration.TokenSubject(cluster, addon)
			}
		case r.Type == addonv1alpha1.RegistrationTypeCustomSigner && r.CustomSigner != nil:
			rc = addonv1alpha1.RegistrationConfig{SignerName: r.CustomSigner.SignerName, Subject: defaultSubject()}
			if r.CustomSigner.Subject != nil {
				rc.Subject = *r.CustomSigner.Subject.DeepCopy()
			}
		default:
			continue
		}
		if !seen[rc.SignerName] {
			seen[rc.SignerName] = true
			out = append(out, rc)
		}
	}
	return out
}

// PermissionBindingName returns the name of the RoleBinding granting addon's
// agent a role of kind roleKind (Role or ClusterRole), as OCM names it:
// open-cluster-management:<addon>:<kind, lowercase>:agent.
func PermissionBindingName(addon, roleKind string) string {
	return "open-cluster-management:" + addon + ":" + strings.ToLower(roleKind) + ":agent"
}

// PermissionBindings returns the RoleBindings of the hub permissions of the
// template's KubeClient registrations for the add-on on cluster: a
// CurrentCluster permission binds its ClusterRole in the cluster's
// namespace, a SingleNamespace permission binds its roleRef in its
// namespace; the subjects are the add-on's group on the cluster (its
// certificates) and its ServiceAccount in the cluster's namespace (its
// tokens, identity.AddonServiceAccount), so that the grant holds whichever
// driver the agent uses. They carry
// the labels open-cluster-management.io/addon-name,
// open-cluster-management.io/addon-template-name and
// open-cluster-management.io/cluster-name, and no owner: the caller adds
// the ManagedClusterAddOn as owner of those in the cluster's namespace. An
// error wraps ErrInvalidHubPermission.
func PermissionBindings(cluster, addon string, t *addonv1alpha1.AddOnTemplate) ([]rbacv1.RoleBinding, error) {
	var out []rbacv1.RoleBinding
	where := map[string]string{} // RoleBinding namespace/name -> the permission making it
	for i, r := range t.Spec.Registration {
		if r.Type != addonv1alpha1.RegistrationTypeKubeClient || r.KubeClient == nil {
			continue
		}
		for j, p := range r.KubeClient.HubPermissions {
			path := fmt.Sprintf("spec.registration[%d].kubeClient.hubPermissions[%d]", i, j)
			namespace, roleRef, err := permission(cluster, p)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrInvalidHubPermission, path, err)
			}
			rb := rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: namespace,
					Name:      PermissionBindingName(addon, roleRef.Kind),
					Labels: map[string]string{
						addonv1alpha1.AddonLabelKey:         addon,
						addonv1alpha1.AddonTemplateLabelKey: t.Name,
						clusterv1.ClusterNameLabelKey:       cluster,
					},
				},
				RoleRef: roleRef,
				Subjects: []rbacv1.Subject{
					{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.AddonClusterGroup(cluster, addon)},
					{Kind: rbacv1.ServiceAccountKind, Namespace: cluster, Name: identity.AddonServiceAccount(addon)},
				},
			}
			key := rb.Namespace + "/" + rb.Name
			if other, ok := where[key]; ok {
				return nil, fmt.Errorf("%w: %s and %s both make RoleBinding %s; bind one %s per namespace, or aggregate the roles",
					ErrInvalidHubPermission, other, path, key, roleRef.Kind)
			}
			where[key] = path
			out = append(out, rb)
		}
	}
	return out, nil
}

// permission returns the namespace and role of one hub permission.
func permission(cluster string, p addonv1alpha1.HubPermissionConfig) (string, rbacv1.RoleRef, error) {
	switch p.Type {
	case addonv1alpha1.HubPermissionsBindingCurrentCluster:
		if p.CurrentCluster == nil || p.CurrentCluster.ClusterRoleName == "" {
			return "", rbacv1.RoleRef{}, fmt.Errorf("type CurrentCluster needs currentCluster.clusterRoleName")
		}
		return cluster, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: p.CurrentCluster.ClusterRoleName}, nil
	case addonv1alpha1.HubPermissionsBindingSingleNamespace:
		if p.SingleNamespace == nil || p.SingleNamespace.Namespace == "" {
			return "", rbacv1.RoleRef{}, fmt.Errorf("type SingleNamespace needs singleNamespace.namespace")
		}
		ref := p.SingleNamespace.RoleRef
		if ref.Kind != "Role" && ref.Kind != "ClusterRole" || ref.Name == "" {
			return "", rbacv1.RoleRef{}, fmt.Errorf("singleNamespace.roleRef must name a Role or ClusterRole, not %q %q", ref.Kind, ref.Name)
		}
		if ref.APIGroup == "" {
			ref.APIGroup = rbacv1.GroupName
		}
		return p.SingleNamespace.Namespace, ref, nil
	default:
		return "", rbacv1.RoleRef{}, fmt.Errorf("unknown type %q: use CurrentCluster or SingleNamespace", p.Type)
	}
}
