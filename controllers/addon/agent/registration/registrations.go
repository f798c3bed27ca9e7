package registration

import (
	"context"
	"crypto/x509/pkix"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// pendingSuffix ends the name of the Secret keeping the pending request of
// a credential Secret: <credential Secret>-pending, in the agent's
// namespace.
const pendingSuffix = "-pending"

// certRegistration is one registration the agent obtains a client
// certificate for.
type certRegistration struct {
	// signer is the registration's signer.
	signer string
	// subject is the certificate's subject, defaults filled in.
	subject pkix.Name
	// target is the credential Secret in the install namespace, and
	// pending the Secret of its pending request in the agent's namespace.
	target, pending types.NamespacedName
}

// custom reports whether reg is a custom signer's (its Secret holds the
// certificate only, no kubeconfig).
func (reg certRegistration) custom() bool {
	return reg.signer != addonv1alpha1.KubeAPIServerClientSignerName
}

// certRegistrations returns the registrations of mca the agent obtains
// certificates for: the kube-apiserver-client one (the first, written to
// <addon>-hub-kubeconfig) unless tokens serve it, and one per other signer
// (the first of each, written to <addon>-<signer>-client-cert, as OCM
// names it).
func (r *Reconciler) certRegistrations(mca *addonv1alpha1.ManagedClusterAddOn) []certRegistration {
	var out []certRegistration
	seen := map[string]bool{}
	for _, rc := range mca.Status.Registrations {
		if seen[rc.SignerName] {
			continue
		}
		seen[rc.SignerName] = true
		name := registration.CustomSignerSecretName(mca.Name, rc.SignerName)
		if rc.SignerName == addonv1alpha1.KubeAPIServerClientSignerName {
			if r.driver() == addonv1alpha1.KubeClientDriverToken {
				continue
			}
			name = mca.Name + SecretSuffix
		}
		out = append(out, certRegistration{
			signer:  rc.SignerName,
			subject: certs.AddonSubject(r.Cluster, mca.Name, rc.Subject),
			target:  types.NamespacedName{Namespace: mca.AgentInstallNamespace(), Name: name},
			pending: types.NamespacedName{Namespace: r.Namespace, Name: name + pendingSuffix},
		})
	}
	return out
}

// credentialData returns the data of the credential Secret of reg for addon
// with certificate certPEM and key keyPEM: for the kube-apiserver-client
// signer the hub credential (kubeconfig.AddonCredentialData); for a custom
// signer, as OCM lays it out, tls.crt, tls.key and cluster-name.
func (r *Reconciler) credentialData(addon string, reg certRegistration, certPEM, keyPEM []byte) (map[string][]byte, error) {
	if !reg.custom() {
		return kubeconfig.AddonCredentialData(r.HubInfo, r.Cluster, addon, certPEM, keyPEM)
	}
	return map[string][]byte{
		corev1.TLSCertKey:         certPEM,
		corev1.TLSPrivateKeyKey:   keyPEM,
		kubeconfig.ClusterNameKey: []byte(r.Cluster),
	}, nil
}

// rotation is what the ClusterCertificateRotated condition says of one
// registration: its credential is valid (ok, and wrote when it was just
// written) or failed, and why.
type rotation struct {
	ok, wrote bool
	message   string
}

// failed is the rotation of a registration whose credential cannot be
// obtained or written, for message.
func failed(message string) *rotation { return &rotation{message: message} }

// reportRotation sets ClusterCertificateRotated of mca from the rotations
// of its certificate registrations (nil for one still waiting for its
// request): False (ClientCertificateUpdateFailed) naming each that failed;
// True (ClientCertificateUpdated) naming them all once every one is valid,
// when one was just written or the condition is not True yet; otherwise it
// leaves the condition alone.
func (r *Reconciler) reportRotation(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, rotations []*rotation) error {
	var bad, good []string
	wrote, waiting := false, false
	for _, rot := range rotations {
		switch {
		case rot == nil:
			waiting = true
		case !rot.ok:
			bad = append(bad, rot.message)
		default:
			good = append(good, rot.message)
			wrote = wrote || rot.wrote
		}
	}
	switch {
	case len(bad) > 0:
		return r.setRotated(ctx, mca, metav1.ConditionFalse, clusterv1.ReasonClientCertificateUpdateFailed, strings.Join(bad, "; "))
	case waiting || len(good) == 0:
		return nil
	}
	if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnCertificateRotated); !wrote && c != nil && c.Status == metav1.ConditionTrue {
		return nil
	}
	return r.setRotated(ctx, mca, metav1.ConditionTrue, clusterv1.ReasonClientCertificateUpdated, strings.Join(good, "; "))
}
