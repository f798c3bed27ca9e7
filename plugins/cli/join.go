package cli

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// Names of the hub's bootstrap identity, which `kubectl ocm join` uses.
const (
	// BootstrapNamespace holds the bootstrap ServiceAccount.
	BootstrapNamespace = "open-cluster-management"
	// BootstrapServiceAccount is the ServiceAccount whose tokens join clusters.
	BootstrapServiceAccount = "agent-registration-bootstrap"
)

// JoinInfo is what a managed cluster needs to join the hub.
type JoinInfo struct {
	// HubToken is a bootstrap ServiceAccount token.
	HubToken string `json:"hubToken"`
	// HubAPIServer is the hub API server URL.
	HubAPIServer string `json:"hubApiserver"`
	// ExpirationTimestamp is when HubToken expires.
	ExpirationTimestamp metav1.Time `json:"expirationTimestamp"`
}

// Command returns the join command line for the managed cluster side.
func (j JoinInfo) Command() string {
	return fmt.Sprintf("kubectl ocm join --hub-token %s --hub-apiserver %s --cluster-name <cluster_name>", j.HubToken, j.HubAPIServer)
}

// NewJoinInfo requests a bootstrap token valid for duration from the hub
// that cfg points at.
func NewJoinInfo(ctx context.Context, cfg *rest.Config, duration time.Duration) (JoinInfo, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return JoinInfo{}, fmt.Errorf("create client for %s: %w", cfg.Host, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(duration / time.Second)),
	}}
	tr, err = cs.CoreV1().ServiceAccounts(BootstrapNamespace).CreateToken(ctx, BootstrapServiceAccount, tr, metav1.CreateOptions{})
	if err != nil {
		return JoinInfo{}, fmt.Errorf("request a token for ServiceAccount %s/%s (is the hub installed? run `kubectl ocm hub init`): %w",
			BootstrapNamespace, BootstrapServiceAccount, err)
	}
	return JoinInfo{HubToken: tr.Status.Token, HubAPIServer: cfg.Host, ExpirationTimestamp: tr.Status.ExpirationTimestamp}, nil
}
