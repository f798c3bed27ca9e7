package csr

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// bootstrapServiceAccount returns the ServiceAccount of a bootstrap
// identity that is one: the shared bootstrap ServiceAccount or a
// cluster-bound one.
func bootstrapServiceAccount(user string) (client.ObjectKey, bool) {
	if user == identity.BootstrapUser {
		return client.ObjectKey{Namespace: identity.BootstrapNamespace, Name: identity.BootstrapServiceAccount}, true
	}
	if who := identity.Classify(user); who.Kind == identity.ClusterBootstrap {
		ns, name := identity.BootstrapServiceAccountOf(who.Cluster)
		return client.ObjectKey{Namespace: ns, Name: name}, true
	}
	return client.ObjectKey{}, false
}

// Revoked says why req, filed by a bootstrap ServiceAccount, was filed with
// a token revoked since: `kubectl ocm hub token revoke` deletes the
// ServiceAccount (and creates the shared one anew, with another UID), and
// the request's spec.uid is the UID of the ServiceAccount whose token made
// it. It returns "" for a request of a ServiceAccount that still exists
// with that UID, and for every other requester. Both the hub controller and
// `kubectl ocm accept` refuse a revoked request.
func Revoked(ctx context.Context, c client.Reader, req Request) (string, error) {
	key, ok := bootstrapServiceAccount(req.Requester)
	if !ok {
		return "", nil
	}
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, key, sa); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("its requester, ServiceAccount %s, was deleted since it filed the request (`kubectl ocm hub token revoke`)", key), nil
		}
		return "", fmt.Errorf("read the requester's ServiceAccount %s: %w", key, err)
	}
	if string(sa.UID) != req.UID {
		return fmt.Sprintf("it was filed with a token of ServiceAccount %s revoked since (`kubectl ocm hub token revoke` created the ServiceAccount anew)", key), nil
	}
	return "", nil
}

// KeyFingerprint names a public key for people: its pin (certs.KeyPin),
// "sha256:" and the hex SHA-256 of its DER SubjectPublicKeyInfo, as
// kubeadm's discovery pins name a CA's key; "unknown" for a key x509
// cannot encode.
func KeyFingerprint(pub any) string {
	pin, err := certs.KeyPin(pub)
	if err != nil {
		return "unknown"
	}
	return pin
}
