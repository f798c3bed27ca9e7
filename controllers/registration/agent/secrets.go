package agent

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// The agent's Secrets, read directly (not cached) and written in its own
// namespace: bootstrap kubeconfig, hub credential, pending request and, in
// Hosted mode, the managed cluster's kubeconfig.
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get;create;update;delete

// secretData returns the data of Secret name in the agent's namespace, nil
// when it does not exist.
func (a *Agent) secretData(ctx context.Context, name string) (map[string][]byte, error) {
	s, err := a.readSecret(ctx, name)
	if err != nil || s == nil {
		return nil, err
	}
	if s.Data == nil {
		return map[string][]byte{}, nil
	}
	return s.Data, nil
}

// readSecret returns Secret name in the agent's namespace, nil when it does
// not exist.
func (a *Agent) readSecret(ctx context.Context, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := a.mgmtReader.Get(ctx, types.NamespacedName{Namespace: a.opts.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", a.opts.Namespace, name, err)
	}
	return s, nil
}

// replaceSecretData replaces the data of s, a Secret as readSecret returned
// it, with data. It fails with a conflict when s changed since it was read,
// so that data computed from s never overwrites a later write (a rotated
// certificate).
func (a *Agent) replaceSecretData(ctx context.Context, s *corev1.Secret, data map[string][]byte) error {
	s = s.DeepCopy()
	s.Data = data
	if err := a.mgmt.Update(ctx, s); err != nil {
		return fmt.Errorf("update Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// writeSecret creates or replaces the data of Secret name in the agent's
// namespace.
func (a *Agent) writeSecret(ctx context.Context, name string, data map[string][]byte) error {
	s := &corev1.Secret{}
	key := types.NamespacedName{Namespace: a.opts.Namespace, Name: name}
	err := a.mgmtReader.Get(ctx, key, s)
	switch {
	case apierrors.IsNotFound(err):
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if err := a.mgmt.Create(ctx, s); err != nil {
			return fmt.Errorf("create Secret %s: %w", key, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read Secret %s: %w", key, err)
	}
	if maps.EqualFunc(s.Data, data, func(x, y []byte) bool { return string(x) == string(y) }) {
		return nil
	}
	s = s.DeepCopy()
	s.Data = data
	if err := a.mgmt.Update(ctx, s); err != nil {
		return fmt.Errorf("update Secret %s: %w", key, err)
	}
	return nil
}

// deleteSecret deletes Secret name in the agent's namespace if it exists.
func (a *Agent) deleteSecret(ctx context.Context, name string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.opts.Namespace, Name: name}}
	if err := a.mgmt.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Secret %s/%s: %w", a.opts.Namespace, name, err)
	}
	return nil
}

// bootstrapKubeconfig reads the bootstrap kubeconfig of the current hub
// (kubeconfig.FromSecret).
// It returns an error naming the Secret when it is missing or unusable.
func (a *Agent) bootstrapKubeconfig(ctx context.Context) (*kubeconfig.Info, error) {
	name := a.bootstrapSecret()
	data, err := a.secretData(ctx, name)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, &bootstrapError{missing: true, err: fmt.Errorf("secret %s/%s not found", a.opts.Namespace, name)}
	}
	info, err := kubeconfig.FromSecret(data)
	if err != nil {
		return nil, &bootstrapError{err: fmt.Errorf("secret %s/%s: %w", a.opts.Namespace, name, err)}
	}
	return info, nil
}

// bootstrapError is a missing or unusable bootstrap kubeconfig.
type bootstrapError struct {
	missing bool
	err     error
}

func (e *bootstrapError) Error() string { return e.err.Error() }
func (e *bootstrapError) Unwrap() error { return e.err }

// loadHubCredential reads and checks the hub credential of id. A missing
// bootstrap kubeconfig does not invalidate a working hub credential.
func (a *Agent) loadHubCredential(ctx context.Context, id identity) (*hubCredential, error) {
	data, err := a.secretData(ctx, a.opts.HubKubeconfigSecret)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("secret %s/%s not found", a.opts.Namespace, a.opts.HubKubeconfigSecret)
	}
	bootstrap, err := a.bootstrapKubeconfig(ctx)
	if err != nil {
		bootstrap = nil
	}
	cred, err := checkHubCredential(data, id, a.opts.tokenAuth(), bootstrap, a.now())
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", a.opts.Namespace, a.opts.HubKubeconfigSecret, err)
	}
	return cred, nil
}

// loadPending returns the pending request of id (kubeconfig.ReadPendingRequest),
// starting a new one with a new private key when there is none.
func (a *Agent) loadPending(ctx context.Context, id identity) (*certs.PendingRequest, error) {
	data, err := a.secretData(ctx, a.opts.pendingSecretName())
	if err != nil {
		return nil, err
	}
	if p := kubeconfig.ReadPendingRequest(data, id.cluster, id.agentID); p != nil {
		return p, nil
	}
	p, err := certs.NewPendingRequest()
	if err != nil {
		return nil, err
	}
	return p, a.savePending(ctx, id, p)
}

// savePending writes the pending request of id; a nil p records only id.
func (a *Agent) savePending(ctx context.Context, id identity, p *certs.PendingRequest) error {
	return a.writeSecret(ctx, a.opts.pendingSecretName(), kubeconfig.PendingRequestData(id.cluster, id.agentID, p))
}
