package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

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
	fs.StringVar(&o.ProxyURL, "proxy-url", o.ProxyURL, "An HTTP or HTTPS proxy (http[s]://host:port) through which the agent reaches the hub, and this command too: written into the agent's bootstrap kubeconfig and kept in every hub kubeconfig the agent writes after it. The cluster of --context is reached through the environment's proxy (HTTPS_PROXY, NO_PROXY), as kubectl does.")
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

// validateProxy checks --proxy-url and --proxy-ca-file, one error per
// problem.
func (o *Options) validateProxy() []error {
	var errs []error
	if o.ProxyURL != "" {
		u, err := url.Parse(o.ProxyURL)
		switch {
		case err != nil || u.Host == "":
			errs = append(errs, fmt.Errorf("--proxy-url %q is not a URL such as http://proxy.example.com:3128", o.ProxyURL))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Errorf("--proxy-url %q: the agent reaches the hub through an HTTP or HTTPS proxy; use an http:// or https:// URL", o.ProxyURL))
		default:
			o.proxyURL = u
		}
	}
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
// hub: through --proxy-url when set, else through the environment's proxy,
// trusting ca (with the proxy's CA) or, with no ca, trusting nothing yet.
func (o *Options) hubConfig(ca []byte) *rest.Config {
	cfg := &rest.Config{Host: o.HubAPIServer, BearerToken: o.HubToken, Timeout: preflightTimeout}
	if len(ca) == 0 {
		cfg.Insecure = true
	} else {
		cfg.CAData = o.caBundle(ca)
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

// probeHub makes one unauthenticated request to the hub with cfg and
// returns the error of the connection, nil when the hub answered anything:
// whether the hub is reached, and with a CA, whether its certificate is
// trusted.
func probeHub(ctx context.Context, cfg *rest.Config) error {
	anonymous := rest.AnonymousClientConfig(cfg)
	hc, err := rest.HTTPClientFor(anonymous)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/version", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.Body.Close()
}
