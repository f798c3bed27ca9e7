package hub

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
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
	// CACertHashes are the pins (certs.Pin, kubeadm's
	// --discovery-token-ca-cert-hash format) of the hub CAs that verify the
	// certificate its API server serves: join's --ca-cert-hash. Empty when
	// no CA the hub publishes or the kubeconfig trusts verifies it.
	CACertHashes []string `json:"caCertHashes,omitempty"`
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
	var pins strings.Builder
	for _, p := range j.CACertHashes {
		pins.WriteString(" --ca-cert-hash " + p)
	}
	return fmt.Sprintf("kubectl ocm join --hub-token %s --hub-apiserver %s%s --cluster-name %s", j.HubToken, j.HubAPIServer, pins.String(), name)
}

// NoPinNote says what to do when JoinInfo has no CACertHashes: join then
// needs the hub's CA bundle.
const NoPinNote = "No CA that the hub publishes (ConfigMap kube-public/kube-root-ca.crt) or that your kubeconfig trusts verifies the hub's serving certificate, so the join command carries no --ca-cert-hash: add --ca-file with the CA bundle that verifies it (or --ca-cert-hash with that CA's pin)."

// NewJoinInfo requests a bootstrap token valid for duration from the hub
// that cfg points at, with c. With a cluster name the token belongs to that
// cluster's own bootstrap ServiceAccount, which NewJoinInfo creates (or
// updates) first and which may register that cluster only; without one it
// belongs to the shared bootstrap ServiceAccount.
func NewJoinInfo(ctx context.Context, c client.Client, cfg *rest.Config, duration time.Duration, cluster string) (JoinInfo, error) {
	token, err := config.BootstrapToken(ctx, c, cluster, duration, "")
	if err != nil {
		return JoinInfo{}, fmt.Errorf("%w; is the hub at %s installed? Run `kubectl ocm hub init`", err, cfg.Host)
	}
	pins, err := CAPins(ctx, c, cfg)
	if err != nil {
		return JoinInfo{}, err
	}
	return JoinInfo{HubToken: token.Token, HubAPIServer: cfg.Host, ExpirationTimestamp: token.ExpirationTimestamp, ClusterName: cluster, CACertHashes: pins}, nil
}

// CAPins returns the pins of the CAs that verify the certificate the
// hub at cfg serves, which `kubectl ocm join --ca-cert-hash` checks the hub
// against: those of the hub's published CA bundle (ConfigMap
// kube-public/kube-root-ca.crt, which join reads too) and of the CAs cfg
// trusts. None, without an error, when none of them verifies it (a public
// CA, or a kubeconfig that skips verification).
func CAPins(ctx context.Context, c client.Client, cfg *rest.Config) ([]string, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Scheme != "https" {
		return nil, nil
	}
	var candidates []*x509.Certificate
	if _, cs, err := certs.ReadHubCABundle(ctx, c); err == nil {
		candidates = append(candidates, cs...)
	}
	if ca := cfg.CAData; len(ca) > 0 {
		if cs, err := certs.ParseCertificates(ca); err == nil {
			candidates = append(candidates, cs...)
		}
	} else if cfg.CAFile != "" {
		if data, err := os.ReadFile(cfg.CAFile); err == nil {
			if cs, err := certs.ParseCertificates(data); err == nil {
				candidates = append(candidates, cs...)
			}
		}
	}
	chain, err := servingChain(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("read the certificate the hub at %s serves, to print its CA pin: %w", cfg.Host, err)
	}
	return certs.Pins(certs.ServingCAs(candidates, chain, u.Hostname())), nil
}

// servingChain returns the certificates the API server of cfg presents,
// leaf first, from an anonymous request with cfg's transport.
func servingChain(ctx context.Context, cfg *rest.Config) ([]*x509.Certificate, error) {
	hc, err := rest.HTTPClientFor(rest.AnonymousClientConfig(cfg))
	if err != nil {
		return nil, err
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/version", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	if resp.TLS == nil {
		return nil, errors.New("the connection is not TLS")
	}
	return resp.TLS.PeerCertificates, nil
}
