package klusterlet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// revokeTimeout bounds the revocation of the token identity on the hub.
const revokeTimeout = 10 * time.Second

// revokeHubToken revokes the token identity of the deleted Klusterlet k's
// agent on the hub: when the agent's hub credential is a token of the
// token registration driver (its cluster's token identity in
// identity.AgentTokenNamespace, or, from a hub of an earlier release,
// identity.LegacyAgentServiceAccount of its cluster namespace), it deletes
// that ServiceAccount with the token itself (the agent may delete its own
// ServiceAccount), which invalidates every token of it. Unjoining must not depend on the hub, so a failure is logged and
// the administrator deletes the ServiceAccount, or the ManagedCluster, on
// the hub. Certificates cannot be revoked; they expire.
func (r *Reconciler) revokeHubToken(ctx context.Context, k *operatorv1.Klusterlet) {
	log := ctrl.LoggerFrom(ctx)
	s := &corev1.Secret{}
	err := r.Direct.Get(ctx, types.NamespacedName{Namespace: agentNamespace(k), Name: operatorv1.HubKubeConfigSecret}, s)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			log.Error(err, "Cannot read the hub credential to revoke it")
		}
		return
	}
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil || cred.Kubeconfig.Token == "" {
		return
	}
	token, err := kubeconfig.ParseServiceAccountToken([]byte(cred.Kubeconfig.Token))
	if err != nil || !isAgentToken(token) || !token.Expiry.After(time.Now()) {
		return
	}
	if err := deleteServiceAccount(ctx, cred.Kubeconfig, token.Namespace, token.Name); err != nil {
		log.Error(err, "Cannot revoke the agent's token identity on the hub; delete it there",
			"serviceAccount", token.Namespace+"/"+token.Name, "hub", cred.Kubeconfig.Server)
		return
	}
	log.Info("Revoked the agent's token identity on the hub", "serviceAccount", token.Namespace+"/"+token.Name, "hub", cred.Kubeconfig.Server)
}

// isAgentToken reports whether t is a token of a cluster agent's token
// identity: of the ServiceAccount named after its cluster in
// identity.AgentTokenNamespace, or of identity.LegacyAgentServiceAccount.
func isAgentToken(t *kubeconfig.ServiceAccountToken) bool {
	return t.Namespace == identity.AgentTokenNamespace || t.Name == identity.LegacyAgentServiceAccount
}

// deleteServiceAccount deletes ServiceAccount namespace/name on the hub of
// hub, authenticated as hub's credential.
func deleteServiceAccount(ctx context.Context, hub *kubeconfig.Info, namespace, name string) error {
	cfg, err := hub.RESTConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = revokeTimeout
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return fmt.Errorf("create hub client: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Delete(ctx, sa); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete ServiceAccount %s/%s on the hub: %w", namespace, name, err)
	}
	return nil
}
