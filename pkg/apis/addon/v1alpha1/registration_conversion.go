package v1alpha1

import (
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// registrationsToV1beta1 maps a ManagedClusterAddOn's status.registrations.
// A registration for the kube-apiserver client signer becomes a kubeClient
// one with driver; any other becomes a customSigner one. drivers, when it has
// one entry per registration, gives each kubeClient registration its own driver.
func registrationsToV1beta1(in []RegistrationConfig, driver string, drivers []string) []v1beta1.RegistrationConfig {
	out := mapSlice(in, func(r RegistrationConfig) v1beta1.RegistrationConfig {
		return registrationToV1beta1(r, driver)
	})
	if len(drivers) != len(out) {
		return out
	}
	for i := range out {
		if out[i].KubeClient != nil {
			out[i].KubeClient.Driver = drivers[i]
		}
	}
	return out
}

// registrationToV1beta1 maps one registration, giving a kubeClient one driver.
// The organization units of a kubeClient subject have no v1beta1 field; the
// caller keeps them.
func registrationToV1beta1(in RegistrationConfig, driver string) v1beta1.RegistrationConfig {
	base := v1beta1.BaseSubject{User: in.Subject.User, Groups: stringsCopy(in.Subject.Groups)}
	if in.SignerName == KubeAPIServerClientSignerName {
		return v1beta1.RegistrationConfig{
			Type: v1beta1.KubeClient,
			KubeClient: &v1beta1.KubeClientConfig{
				Subject: v1beta1.KubeClientSubject{BaseSubject: base},
				Driver:  driver,
			},
		}
	}
	return v1beta1.RegistrationConfig{
		Type: v1beta1.CustomSigner,
		CustomSigner: &v1beta1.CustomSignerConfig{
			SignerName: in.SignerName,
			Subject:    v1beta1.Subject{BaseSubject: base, OrganizationUnits: stringsCopy(in.Subject.OrganizationUnits)},
		},
	}
}

// registrationFromV1beta1 maps one registration back: a kubeClient one gets
// the kube-apiserver client signer, a customSigner one its own signer. The
// driver of a kubeClient one goes to status.kubeClientDriver, set by the caller.
func registrationFromV1beta1(in v1beta1.RegistrationConfig) RegistrationConfig {
	switch {
	case in.Type == v1beta1.KubeClient:
		out := RegistrationConfig{SignerName: KubeAPIServerClientSignerName}
		if in.KubeClient != nil {
			out.Subject = Subject{User: in.KubeClient.Subject.User, Groups: stringsCopy(in.KubeClient.Subject.Groups)}
		}
		return out
	case in.CustomSigner != nil:
		s := in.CustomSigner.Subject
		return RegistrationConfig{
			SignerName: in.CustomSigner.SignerName,
			Subject:    Subject{User: s.User, Groups: stringsCopy(s.Groups), OrganizationUnits: stringsCopy(s.OrganizationUnits)},
		}
	default:
		return RegistrationConfig{}
	}
}

// firstKubeClient returns the index of the first kubeClient registration, or -1.
func firstKubeClient(regs []v1beta1.RegistrationConfig) int {
	for i, r := range regs {
		if r.Type == v1beta1.KubeClient {
			return i
		}
	}
	return -1
}

// kubeClientDriver returns the driver of a kubeClient registration, "" for
// any other.
func kubeClientDriver(r v1beta1.RegistrationConfig) string {
	if r.Type != v1beta1.KubeClient || r.KubeClient == nil {
		return ""
	}
	return r.KubeClient.Driver
}
