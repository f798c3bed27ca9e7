package v1alpha1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// ConvertTo converts this AddOnTemplate to the v1beta1 hub version; both
// versions hold the same fields.
func (tmpl *AddOnTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.AddOnTemplate)
	if !ok {
		return hubTypeError(dst, dstRaw)
	}
	dst.ObjectMeta = copyMeta(&tmpl.ObjectMeta)
	dst.Spec = v1beta1.AddOnTemplateSpec{
		AddonName:    tmpl.Spec.AddonName,
		AgentSpec:    *tmpl.Spec.AgentSpec.DeepCopy(),
		Registration: mapSlice(tmpl.Spec.Registration, templateRegistrationToV1beta1),
	}
	return nil
}

// ConvertFrom sets this AddOnTemplate from the v1beta1 hub version.
func (tmpl *AddOnTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.AddOnTemplate)
	if !ok {
		return hubTypeError(src, srcRaw)
	}
	tmpl.ObjectMeta = copyMeta(&src.ObjectMeta)
	tmpl.Spec = AddOnTemplateSpec{
		AddonName:    src.Spec.AddonName,
		AgentSpec:    *src.Spec.AgentSpec.DeepCopy(),
		Registration: mapSlice(src.Spec.Registration, templateRegistrationFromV1beta1),
	}
	return nil
}

// templateRegistrationToV1beta1 maps one registration of an AddOnTemplate.
func templateRegistrationToV1beta1(in RegistrationSpec) v1beta1.RegistrationSpec {
	return v1beta1.RegistrationSpec{
		Type: v1beta1.AddOnTemplateRegistrationType(in.Type),
		KubeClient: mapPtr(in.KubeClient, func(k KubeClientRegistrationConfig) v1beta1.KubeClientRegistrationConfig {
			return v1beta1.KubeClientRegistrationConfig{HubPermissions: mapSlice(k.HubPermissions, hubPermissionToV1beta1)}
		}),
		CustomSigner: mapPtr(in.CustomSigner, func(c CustomSignerRegistrationConfig) v1beta1.CustomSignerRegistrationConfig {
			return v1beta1.CustomSignerRegistrationConfig{
				SignerName: c.SignerName,
				Subject: mapPtr(c.Subject, func(s Subject) v1beta1.AddOnTemplateSubject {
					return v1beta1.AddOnTemplateSubject{User: s.User, Groups: stringsCopy(s.Groups), OrganizationUnits: stringsCopy(s.OrganizationUnits)}
				}),
				SigningCA: v1beta1.SigningCARef{Namespace: c.SigningCA.Namespace, Name: c.SigningCA.Name},
			}
		}),
	}
}

// templateRegistrationFromV1beta1 maps one registration of an AddOnTemplate back.
func templateRegistrationFromV1beta1(in v1beta1.RegistrationSpec) RegistrationSpec {
	return RegistrationSpec{
		Type: RegistrationType(in.Type),
		KubeClient: mapPtr(in.KubeClient, func(k v1beta1.KubeClientRegistrationConfig) KubeClientRegistrationConfig {
			return KubeClientRegistrationConfig{HubPermissions: mapSlice(k.HubPermissions, hubPermissionFromV1beta1)}
		}),
		CustomSigner: mapPtr(in.CustomSigner, func(c v1beta1.CustomSignerRegistrationConfig) CustomSignerRegistrationConfig {
			return CustomSignerRegistrationConfig{
				SignerName: c.SignerName,
				Subject: mapPtr(c.Subject, func(s v1beta1.AddOnTemplateSubject) Subject {
					return Subject{User: s.User, Groups: stringsCopy(s.Groups), OrganizationUnits: stringsCopy(s.OrganizationUnits)}
				}),
				SigningCA: SigningCARef{Namespace: c.SigningCA.Namespace, Name: c.SigningCA.Name},
			}
		}),
	}
}

// hubPermissionToV1beta1 maps one hub permission of a KubeClient registration.
func hubPermissionToV1beta1(in HubPermissionConfig) v1beta1.HubPermissionConfig {
	return v1beta1.HubPermissionConfig{
		Type: v1beta1.HubPermissionsBindingType(in.Type),
		CurrentCluster: mapPtr(in.CurrentCluster, func(c CurrentClusterBindingConfig) v1beta1.CurrentClusterBindingConfig {
			return v1beta1.CurrentClusterBindingConfig{ClusterRoleName: c.ClusterRoleName}
		}),
		SingleNamespace: mapPtr(in.SingleNamespace, func(s SingleNamespaceBindingConfig) v1beta1.SingleNamespaceBindingConfig {
			return v1beta1.SingleNamespaceBindingConfig{Namespace: s.Namespace, RoleRef: s.RoleRef}
		}),
	}
}

// hubPermissionFromV1beta1 maps one hub permission back.
func hubPermissionFromV1beta1(in v1beta1.HubPermissionConfig) HubPermissionConfig {
	return HubPermissionConfig{
		Type: HubPermissionsBindingType(in.Type),
		CurrentCluster: mapPtr(in.CurrentCluster, func(c v1beta1.CurrentClusterBindingConfig) CurrentClusterBindingConfig {
			return CurrentClusterBindingConfig{ClusterRoleName: c.ClusterRoleName}
		}),
		SingleNamespace: mapPtr(in.SingleNamespace, func(s v1beta1.SingleNamespaceBindingConfig) SingleNamespaceBindingConfig {
			return SingleNamespaceBindingConfig{Namespace: s.Namespace, RoleRef: s.RoleRef}
		}),
	}
}
