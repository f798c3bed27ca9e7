package join

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
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
	host := o.hubURL.Host
	if o.hubURL.Port() == "" {
		host = net.JoinHostPort(o.hubURL.Hostname(), "443")
	}
	dialer := &net.Dialer{Timeout: preflightTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the hub at %s: %v; check --hub-apiserver and that this machine can reach the hub", o.HubAPIServer, err)
	}
	_ = conn.Close()

	ca, source := o.hubCA, "--ca-file "+o.CAFile
	if len(ca) == 0 {
		source = "ConfigMap kube-public/kube-root-ca.crt"
		if ca, err = o.fetchHubCA(ctx); err != nil {
			return nil, err
		}
	}
	if err := verifyServing(ctx, o.hubURL, host, ca); err != nil {
		return nil, fmt.Errorf("the hub's serving certificate at %s is not trusted by the hub CA from %s: %v; pass the hub's CA bundle with --ca-file", o.HubAPIServer, source, err)
	}

	cfg := &rest.Config{Host: o.HubAPIServer, BearerToken: o.HubToken, Timeout: preflightTimeout,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
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

// tokenError turns an error of a request made with the token into one line.
func tokenError(server string, err error) error {
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("the hub at %s rejected --hub-token (wrong or expired); get a new one with `kubectl ocm hub token` on the hub", server)
	}
	return fmt.Errorf("cannot check --hub-token with the hub at %s: %w", server, err)
}

// fetchHubCA reads the hub CA from ConfigMap kube-public/kube-root-ca.crt
// with the token. The connection cannot be verified yet (that is what the CA
// is for), so the caller verifies the hub with the result before trusting it.
func (o *Options) fetchHubCA(ctx context.Context) ([]byte, error) {
	cfg := &rest.Config{Host: o.HubAPIServer, BearerToken: o.HubToken, Timeout: preflightTimeout,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create a hub client: %w", err)
	}
	cm := &corev1.ConfigMap{}
	err = c.Get(ctx, types.NamespacedName{Namespace: "kube-public", Name: "kube-root-ca.crt"}, cm)
	switch {
	case apierrors.IsUnauthorized(err):
		return nil, tokenError(o.HubAPIServer, err)
	case err != nil:
		return nil, fmt.Errorf("cannot read the hub CA from ConfigMap kube-public/kube-root-ca.crt on %s: %v; pass the hub's CA bundle with --ca-file", o.HubAPIServer, err)
	case cm.Data["ca.crt"] == "":
		return nil, fmt.Errorf("ConfigMap kube-public/kube-root-ca.crt on %s has no ca.crt; pass the hub's CA bundle with --ca-file", o.HubAPIServer)
	}
	return []byte(cm.Data["ca.crt"]), nil
}

// verifyServing checks with a TLS handshake that the server at hostPort
// presents a certificate for u's host that chains to ca.
func verifyServing(ctx context.Context, u *url.URL, hostPort string, ca []byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return errors.New("the CA bundle holds no PEM certificate")
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: preflightTimeout}, Config: &tls.Config{
		RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12,
	}}
	conn, err := d.DialContext(ctx, "tcp", hostPort)
	if err != nil {
		return err
	}
	return conn.Close()
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
