package join

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// preflightTimeout bounds each network step of the preflight checks.
const preflightTimeout = 10 * time.Second

// hubCheck is what the preflight checks learned about the hub.
type hubCheck struct {
	// ca is the verified hub CA bundle.
	ca []byte
	// user is the token's identity on the hub.
	user string
	// client talks to the hub with the token, verifying the CA.
	client client.Client
}

// preflight checks the hub before anything is installed. Each error is one
// line naming the cause and the fix.
func (o *Options) preflight(ctx context.Context) (*hubCheck, error) {
	chain, err := probeHub(ctx, o.hubConfig(nil))
	if err != nil {
		return nil, fmt.Errorf("cannot reach the hub at %s%s: %v; %s", o.HubAPIServer, o.viaProxy(), err, reachFix(o))
	}
	// Decide which CA to trust, anonymously, then check the hub with it
	// before the token goes anywhere.
	ca, source, err := o.trustHub(ctx, chain)
	if err != nil {
		return nil, err
	}
	if _, err := probeHub(ctx, o.hubConfig(ca)); err != nil {
		return nil, fmt.Errorf("the hub's serving certificate at %s is not trusted by the hub CA from %s: %v; pass the hub's CA bundle with --ca-file, or its pin with --ca-cert-hash", o.HubAPIServer, source, err)
	}

	cfg := o.hubConfig(ca)
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create a hub client: %w", err)
	}
	check := &hubCheck{ca: ca, client: c}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return nil, tokenError(o.HubAPIServer, err)
	}
	check.user = review.Status.UserInfo.Username
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create"},
	}}
	if err := c.Create(ctx, sar); err != nil {
		return nil, tokenError(o.HubAPIServer, err)
	}
	if !sar.Status.Allowed {
		return nil, fmt.Errorf("the hub accepts the token as %q, but that identity may not create CertificateSigningRequests; use the bootstrap token from `kubectl ocm hub token` on the hub", check.user)
	}
	return check, nil
}

// reachFix says what to check when join cannot reach the hub.
func reachFix(o *Options) string {
	if o.proxyURL == nil {
		return "check --hub-apiserver and that this machine can reach the hub"
	}
	return "check --hub-apiserver and --proxy-url, that this machine can reach the proxy, and that the proxy can reach the hub"
}

// tokenError turns an error of a request made with the token into one line.
func tokenError(server string, err error) error {
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("the hub at %s rejected --hub-token (wrong or expired); get a new one with `kubectl ocm hub token` on the hub", server)
	}
	return fmt.Errorf("cannot check --hub-token with the hub at %s: %w", server, err)
}

// checkClusterName refuses a name already used on the hub by a joined,
// available cluster, unless this managed cluster is that cluster (it holds a
// hub credential for the name) or --force is set. A token that may not read
// ManagedClusters skips the check.
func (o *Options) checkClusterName(ctx context.Context, hub client.Client, localCluster string) error {
	mc := &clusterv1.ManagedCluster{}
	err := hub.Get(ctx, types.NamespacedName{Name: o.ClusterName}, mc)
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || meta.IsNoMatchError(err) {
			return nil
		}
		return fmt.Errorf("cannot check whether cluster name %s is free on the hub: %w", o.ClusterName, err)
	}
	return clusterNameConflict(mc, o.ClusterName, localCluster, o.Force)
}

// clusterNameConflict decides whether joining as name conflicts with the
// existing ManagedCluster mc. localCluster is the cluster name of this
// cluster's own hub credential, if any.
func clusterNameConflict(mc *clusterv1.ManagedCluster, name, localCluster string, force bool) error {
	if force || localCluster == name || !mc.Spec.HubAcceptsClient {
		return nil
	}
	joined := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined)
	available := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if !joined || !available {
		return nil
	}
	return fmt.Errorf("cluster name %s is taken on the hub by another joined, available cluster; choose another --cluster-name, remove the other with `kubectl delete managedcluster %s` on the hub, or pass --force if this is that cluster", name, name)
}
