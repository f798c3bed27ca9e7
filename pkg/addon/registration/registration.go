// Package registration holds the rules of add-on registration that the
// hub's add-on manager and the cluster's agent both follow: which driver an
// add-on's kube-apiserver credential comes from, the identity of the token
// driver, and how the hub tells the agent which ServiceAccount its tokens
// must name.
package registration

import (
	"fmt"
	"strings"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// KubeClient returns the index of mca's registration with the
// kube-apiserver-client signer, -1 when there is none. OCM serves one per
// add-on: the first.
func KubeClient(regs []addonv1alpha1.RegistrationConfig) int {
	for i, r := range regs {
		if r.SignerName == addonv1alpha1.KubeAPIServerClientSignerName {
			return i
		}
	}
	return -1
}

// UsesToken reports whether the agent of mca obtains its kube-apiserver
// credential with the token driver: the agent reports kubeClientDriver
// token, and mca has a kube-apiserver-client registration.
func UsesToken(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return mca.Status.KubeClientDriver == addonv1alpha1.KubeClientDriverToken && KubeClient(mca.Status.Registrations) >= 0
}

// TokenSubject is the subject of the kube-apiserver-client registration of
// addon on cluster with the token driver, as OCM's agent writes it: the
// user of ServiceAccount <addon>-agent in the cluster's namespace, and no
// groups (the API server gives a ServiceAccount's its own).
func TokenSubject(cluster, addon string) addonv1alpha1.Subject {
	return addonv1alpha1.Subject{User: identity.AddonTokenUserName(cluster, addon)}
}

// uidPrefix starts the ServiceAccount's UID in the TokenInfrastructureReady
// message, as OCM writes it.
const uidPrefix = "(UID: "

// ReadyMessage is the message of TokenInfrastructureReady True, as OCM
// writes it: "ServiceAccount <namespace>/<name> (UID: <uid>) is ready".
func ReadyMessage(namespace, name, uid string) string {
	return fmt.Sprintf("ServiceAccount %s/%s %s%s) is ready", namespace, name, uidPrefix, uid)
}

// ServiceAccountUID reads the ServiceAccount's UID from the message of
// TokenInfrastructureReady True (see ReadyMessage); ok is false when it
// names none.
func ServiceAccountUID(message string) (uid string, ok bool) {
	_, rest, found := strings.Cut(message, uidPrefix)
	if !found {
		return "", false
	}
	uid, _, found = strings.Cut(rest, ")")
	if !found || uid == "" {
		return "", false
	}
	return uid, true
}

// kubernetesSignerPrefix starts the names of the signers Kubernetes itself
// serves (kube-controller-manager signs them).
const kubernetesSignerPrefix = "kubernetes.io/"

// IsCustomSigner reports whether signer is a custom signer: one outside
// kubernetes.io/, which no Kubernetes component signs. The hub's add-on
// manager signs the requests of template add-ons for such signers with the
// CA their AddOnTemplate names (customSigner.signingCA).
func IsCustomSigner(signer string) bool {
	return !strings.HasPrefix(signer, kubernetesSignerPrefix)
}

// CustomSignerSecretName returns the Secret holding the client certificate
// of addon's agent from a custom signer, as OCM names it:
// <addon>-<signer with / replaced by ->-client-cert.
func CustomSignerSecretName(addon, signer string) string {
	return fmt.Sprintf("%s-%s-client-cert", addon, strings.ReplaceAll(signer, "/", "-"))
}
