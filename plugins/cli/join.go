package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// JoinInfo is what a managed cluster needs to join the hub.
type JoinInfo struct {
	// HubToken is a bootstrap ServiceAccount token.
	HubToken string `json:"hubToken"`
	// HubAPIServer is the hub API server URL.
	HubAPIServer string `json:"hubApiserver"`
	// ExpirationTimestamp is when HubToken expires.
	ExpirationTimestamp metav1.Time `json:"expirationTimestamp"`
	// ClusterName is the only cluster HubToken may register; empty for the
	// shared bootstrap token, which any cluster may use.
	ClusterName string `json:"clusterName,omitempty"`
}

// MarshalJSON writes the fields under their names and, for the scripts
// that parse clusteradm's output, the token and the URL again under
// clusteradm's keys, hub-token and hub-apiserver.
func (j JoinInfo) MarshalJSON() ([]byte, error) {
	type fields JoinInfo
	return json.Marshal(struct {
		fields
		ClusteradmToken     string `json:"hub-token"`
		ClusteradmAPIServer string `json:"hub-apiserver"`
	}{fields(j), j.HubToken, j.HubAPIServer})
}

// Command returns the join command line for the managed cluster side.
func (j JoinInfo) Command() string {
	return j.CommandFor("<cluster_name>")
}

// CommandFor returns the join command line with --cluster-name name, or
// with the cluster the token is bound to when it is.
func (j JoinInfo) CommandFor(name string) string {
	if j.ClusterName != "" {
		name = j.ClusterName
	}
	return fmt.Sprintf("kubectl ocm join --hub-token %s --hub-apiserver %s --cluster-name %s", j.HubToken, j.HubAPIServer, name)
}

// NewJoinInfo requests a bootstrap token valid for duration from the hub
// that cfg points at, with c. With a cluster name the token belongs to that
// cluster's own bootstrap ServiceAccount, which NewJoinInfo creates (or
// updates) first and which may register that cluster only; without one it
// belongs to the shared bootstrap ServiceAccount.
func NewJoinInfo(ctx context.Context, c client.Client, cfg *rest.Config, duration time.Duration, cluster string) (JoinInfo, error) {
	sa := identity.BootstrapServiceAccount
	if cluster != "" {
		objs, err := config.ClusterBootstrapObjects(cluster)
		if err != nil {
			return JoinInfo{}, err
		}
		if err := apply.Apply(ctx, c, objs, apply.Options{}); err != nil {
			return JoinInfo{}, fmt.Errorf("create the bootstrap identity of cluster %s on %s (is the hub installed? run `kubectl ocm hub init`): %w", cluster, cfg.Host, err)
		}
		sa = identity.ClusterBootstrapServiceAccount(cluster)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(duration / time.Second)),
	}}
	owner := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.BootstrapNamespace, Name: sa}}
	if err := c.SubResource("token").Create(ctx, owner, tr); err != nil {
		return JoinInfo{}, fmt.Errorf("request a token for ServiceAccount %s/%s (is the hub installed? run `kubectl ocm hub init`): %w",
			identity.BootstrapNamespace, sa, err)
	}
	return JoinInfo{HubToken: tr.Status.Token, HubAPIServer: cfg.Host, ExpirationTimestamp: tr.Status.ExpirationTimestamp, ClusterName: cluster}, nil
}
