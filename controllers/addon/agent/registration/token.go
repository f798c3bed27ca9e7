package registration

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// reconcileToken keeps a valid token of the add-on's ServiceAccount
// <addon>-agent on the hub in the add-on's Secret, with the token driver.
// It waits until the hub reports TokenInfrastructureReady True; it leaves a
// valid token alone until TokenRefreshFraction of its lifetime has passed,
// and otherwise requests a new one with the TokenRequest API, as the
// cluster's agent identity (which the hub lets create tokens of that
// ServiceAccount only), and writes it.
func (r *Reconciler) reconcileToken(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	addon := mca.Name
	target := secretKey(mca)
	current, foreign, err := r.readSecret(ctx, mca, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if foreign != "" {
		return ctrl.Result{}, r.setTokenRefreshed(ctx, mca, metav1.ConditionFalse, addonv1alpha1.TokenRefreshedReasonFailed, foreign)
	}
	ready := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady)
	if ready == nil || ready.Status != metav1.ConditionTrue {
		// The condition's change brings the add-on back.
		log.V(2).Info("Waiting for the hub's token infrastructure of the add-on")
		return ctrl.Result{}, nil
	}
	uid, ok := registration.ServiceAccountUID(ready.Message)
	if !ok {
		log.Info("The hub's TokenInfrastructureReady condition names no ServiceAccount UID; tokens are not checked against it", "message", ready.Message)
	}
	sa := identity.AddonServiceAccount(addon)
	now := r.now()
	if current != nil {
		tok, err := r.validToken(current, sa, uid, now)
		switch {
		case err != nil:
			log.Info("The add-on's hub token is not usable; requesting a new one", "secret", target, "reason", err.Error())
		case now.Before(tok.RefreshTime()):
			if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenRefreshed); c == nil || c.Status != metav1.ConditionTrue {
				if err := r.setTokenRefreshed(ctx, mca, metav1.ConditionTrue, addonv1alpha1.TokenRefreshedReasonRefreshed, refreshedMessage(tok)); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{RequeueAfter: min(tok.RefreshTime().Sub(now), ResyncInterval)}, nil
		default:
			log.Info("Refreshing the add-on's hub token", "secret", target, "tokenExpires", tok.Expiry)
		}
	}
	tok, err := r.writeToken(ctx, mca, sa)
	if err != nil {
		msg := fmt.Sprintf("Failed to create token: %v", err)
		return ctrl.Result{}, errors.Join(err, r.setTokenRefreshed(ctx, mca, metav1.ConditionFalse, addonv1alpha1.TokenRefreshedReasonFailed, msg))
	}
	log.Info("Wrote the add-on's hub token", "secret", target, "tokenExpires", tok.Expiry)
	if err := r.setTokenRefreshed(ctx, mca, metav1.ConditionTrue, addonv1alpha1.TokenRefreshedReasonRefreshed, refreshedMessage(tok)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: min(tok.RefreshTime().Sub(r.now()), ResyncInterval)}, nil
}

// validToken returns the claims of the token in the add-on Secret s when it
// is a usable credential of ServiceAccount sa (with UID uid, when known) at
// now for the agent's hub.
func (r *Reconciler) validToken(s *corev1.Secret, sa, uid string, now time.Time) (*kubeconfig.ServiceAccountToken, error) {
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil {
		return nil, err
	}
	tok, err := cred.ValidateToken(r.Cluster, sa, uid, now)
	if err != nil {
		return nil, err
	}
	if !kubeconfig.SameHub(cred.Kubeconfig, r.HubInfo) {
		return nil, fmt.Errorf("it points at %s, but the agent's hub is %s (or another CA or proxy)", cred.Kubeconfig.Server, r.HubInfo.Server)
	}
	return tok, nil
}

// writeToken requests a token of ServiceAccount sa in the cluster's
// namespace on the hub and writes it to the add-on's Secret.
func (r *Reconciler) writeToken(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, sa string) (*kubeconfig.ServiceAccountToken, error) {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &r.TokenExpirationSeconds}}
	owner := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: r.Cluster, Name: sa}}
	if err := r.HubDirect.SubResource("token").Create(ctx, owner, tr); err != nil {
		return nil, fmt.Errorf("request a token of ServiceAccount %s/%s on the hub: %w", r.Cluster, sa, err)
	}
	tok, err := kubeconfig.ParseServiceAccountToken([]byte(tr.Status.Token))
	if err != nil {
		return nil, fmt.Errorf("read the token of ServiceAccount %s/%s: %w", r.Cluster, sa, err)
	}
	data, err := kubeconfig.AddonTokenCredentialData(r.HubInfo, r.Cluster, mca.Name, []byte(tr.Status.Token))
	if err != nil {
		return nil, err
	}
	w, rd := r.targetCluster(mca)
	if err := r.writeSecret(ctx, w, rd, secretKey(mca), mca.Name, data); err != nil {
		return nil, err
	}
	return tok, nil
}

// refreshedMessage is the message of TokenRefreshed True for tok: when it
// expires, as OCM says, and when the agent refreshes it.
func refreshedMessage(tok *kubeconfig.ServiceAccountToken) string {
	return fmt.Sprintf("Addon token refreshed, expires at %s; refreshed after %s",
		tok.Expiry.UTC().Format(time.RFC3339), tok.RefreshTime().UTC().Format(time.RFC3339))
}

// setTokenRefreshed sets the TokenRefreshed condition of mca.
func (r *Reconciler) setTokenRefreshed(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, status metav1.ConditionStatus, reason, message string) error {
	return r.setCondition(ctx, mca, addonv1alpha1.ManagedClusterAddOnTokenRefreshed, status, reason, message)
}
