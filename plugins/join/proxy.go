package join

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

// The agent's path to the hub through an HTTP CONNECT proxy, as
// clusteradm's join --proxy-url and --proxy-ca-file give it: the proxy is
// written into the bootstrap kubeconfig (cluster proxy-url), its CA added
// to the hub CA bundle there, and the agent keeps both in every hub
// kubeconfig it writes after, across certificate rotation. join itself
// reaches the hub the same way, so that its checks test the agent's path.
// The connection to the cluster of --context is kubectl's: through the
// proxy of the environment (HTTPS_PROXY, NO_PROXY), if any.

// addProxyFlags registers --proxy-url and --proxy-ca-file. On join,
// --proxy-url is the agent's proxy to the hub, not kubectl's global flag
// of the same name, which it shadows.
func (o *Options) addProxyFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProxyURL, "proxy-url", o.ProxyURL, "An HTTP or HTTPS proxy (http[s]://host:port) through which the agent, and this command, reach the hub; the cluster of --context uses HTTPS_PROXY as kubectl does.")
	fs.StringVar(&o.ProxyCAFile, "proxy-ca-file", o.ProxyCAFile, "With an https --proxy-url: a file with the CA bundle that verifies the proxy's certificate, added to the hub CA bundle of the agent's kubeconfigs.")
}

// completeProxy reads --proxy-ca-file.
func (o *Options) completeProxy() error {
	if o.ProxyCAFile == "" {
		return nil
	}
	data, err := os.ReadFile(o.ProxyCAFile)
	if err != nil {
		return fmt.Errorf("read --proxy-ca-file: %w", err)
	}
	o.proxyCA = data
	return nil
}

// completeProxyURL parses --proxy-url into proxyURL.
func (o *Options) completeProxyURL() error {
	if o.ProxyURL == "" {
		return nil
	}
	u, err := url.Parse(o.ProxyURL)
	switch {
	case err != nil || u.Host == "":
		return fmt.Errorf("--proxy-url %q is not a URL such as http://proxy.example.com:3128", o.ProxyURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--proxy-url %q: the agent reaches the hub through an HTTP or HTTPS proxy; use an http:// or https:// URL", o.ProxyURL)
	}
	o.proxyURL = u
	return nil
}

// validateProxy checks --proxy-ca-file against the proxy of --proxy-url
// (Complete parsed it), one error per problem.
func (o *Options) validateProxy() []error {
	var errs []error
	if o.ProxyCAFile != "" {
		if o.proxyURL == nil || o.proxyURL.Scheme != "https" {
			errs = append(errs, errors.New("--proxy-ca-file only applies with an https --proxy-url"))
		}
		if len(o.proxyCA) > 0 && !bytes.Contains(o.proxyCA, []byte("-----BEGIN CERTIFICATE-----")) {
			errs = append(errs, fmt.Errorf("--proxy-ca-file %s holds no PEM certificate", o.ProxyCAFile))
		}
	}
	return errs
}

// caBundle returns the CA bundle the agent's kubeconfigs trust: the hub's,
// and the proxy's from --proxy-ca-file.
func (o *Options) caBundle(hubCA []byte) []byte {
	if len(o.proxyCA) == 0 {
		return hubCA
	}
	bundle := append(bytes.TrimRight(bytes.Clone(hubCA), "\n"), '\n')
	return append(bundle, o.proxyCA...)
}

// hubConfig returns the client configuration with which join reaches the
// hub: through --proxy-url when set, else through the environment's proxy.
// With a CA bundle ca it verifies the hub with ca (and the proxy's CA) and
// carries the token; with none it verifies nothing and carries no
// credential at all: join only learns the hub's CA over it (discovery.go),
// so the token never travels over a connection nothing verified.
func (o *Options) hubConfig(ca []byte) *rest.Config {
	cfg := &rest.Config{Host: o.HubAPIServer, Timeout: preflightTimeout}
	if len(ca) == 0 {
		cfg.Insecure = true
	} else {
		cfg.CAData = o.caBundle(ca)
		cfg.BearerToken = o.HubToken
	}
	if o.proxyURL != nil {
		cfg.Proxy = http.ProxyURL(o.proxyURL)
	}
	return cfg
}

// viaProxy names the proxy in messages about reaching the hub.
func (o *Options) viaProxy() string {
	if o.proxyURL == nil {
		return ""
	}
	return " through --proxy-url " + o.ProxyURL
}

// probeHub makes one anonymous request to the hub with cfg and returns the
// certificates the hub presented (leaf first) and the error of the
// connection, nil when the hub answered anything: whether the hub is
// reached, and with a CA, whether its certificate is trusted.
func probeHub(ctx context.Context, cfg *rest.Config) ([]*x509.Certificate, error) {
	resp, err := anonymousGet(ctx, cfg, "/version")
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if err := resp.Body.Close(); err != nil {
		return nil, err
	}
	if resp.TLS == nil {
		return nil, errors.New("the hub did not answer over TLS")
	}
	return resp.TLS.PeerCertificates, nil
}

// anonymousGet makes a GET request of path to the hub with cfg, stripped
// of every credential. The caller closes the body.
func anonymousGet(ctx context.Context, cfg *rest.Config, path string) (*http.Response, error) {
	hc, err := rest.HTTPClientFor(rest.AnonymousClientConfig(cfg))
	if err != nil {
		return nil, err
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	return hc.Do(req)
}
