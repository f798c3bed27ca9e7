package hub

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,verbs=get,resourceNames=extension-apiserver-authentication

// The ConfigMap in which the hub's API server publishes how aggregated API
// servers verify the requests it proxies to them.
const (
	authConfigNamespace = "kube-system"
	authConfigName      = "extension-apiserver-authentication"
)

// authConfigTTL is how long a read of the ConfigMap is used before it is
// read again; a certificate that fails to verify reads it again at once (at
// most once per authConfigRetry), so a rotated front-proxy CA is picked up.
const (
	authConfigTTL   = time.Minute
	authConfigRetry = 5 * time.Second
)

// caller is the user the hub's API server authenticated.
type caller struct {
	user   string
	uid    string
	groups []string
	extra  map[string][]string
}

// frontProxy verifies that a request comes from the hub's API server and
// reads the user it names.
type frontProxy struct {
	reader client.Reader

	mu   sync.Mutex
	cur  *requestHeaderConfig
	read time.Time
}

// requestHeaderConfig is what the ConfigMap says.
type requestHeaderConfig struct {
	roots         *x509.CertPool
	allowedNames  []string
	userHeaders   []string
	uidHeaders    []string
	groupHeaders  []string
	extraPrefixes []string
}

// errUnauthenticated marks a request that did not come from the API server.
var errUnauthenticated = errors.New("unauthenticated")

// authenticate returns the caller of r, which must carry a client
// certificate of the API server's front proxy.
func (f *frontProxy) authenticate(r *http.Request) (*caller, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, fmt.Errorf("%w: no client certificate; this API is served through the hub's API server, at %s", errUnauthenticated, r.URL.Path)
	}
	cfg, err := f.config(r.Context(), false)
	if err != nil {
		return nil, err
	}
	if verr := cfg.verify(r.TLS.PeerCertificates); verr != nil {
		// Perhaps the front-proxy CA was rotated: read the ConfigMap again.
		if cfg, err = f.config(r.Context(), true); err != nil {
			return nil, err
		}
		if verr = cfg.verify(r.TLS.PeerCertificates); verr != nil {
			return nil, fmt.Errorf("%w: %v", errUnauthenticated, verr)
		}
	}
	c := &caller{user: firstHeader(r.Header, cfg.userHeaders), uid: firstHeader(r.Header, cfg.uidHeaders)}
	if c.user == "" {
		return nil, fmt.Errorf("%w: the API server named no user", errUnauthenticated)
	}
	for _, h := range cfg.groupHeaders {
		c.groups = append(c.groups, r.Header.Values(h)...)
	}
	// By prefix, then by header name, as the configuration and the names
	// order them: a key several headers give has its values in one order.
	names := slices.Sorted(maps.Keys(r.Header))
	for _, prefix := range cfg.extraPrefixes {
		for _, name := range names {
			key, ok := cutPrefixFold(name, prefix)
			if !ok || key == "" {
				continue
			}
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			if c.extra == nil {
				c.extra = map[string][]string{}
			}
			c.extra[strings.ToLower(key)] = append(c.extra[strings.ToLower(key)], r.Header[name]...)
		}
	}
	return c, nil
}

// config returns the ConfigMap's content, read again when it is older than
// authConfigTTL or, with refresh, older than authConfigRetry.
func (f *frontProxy) config(ctx context.Context, refresh bool) (*requestHeaderConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	age := time.Since(f.read)
	if f.cur != nil && (age < authConfigRetry || (!refresh && age < authConfigTTL)) {
		return f.cur, nil
	}
	cm := &corev1.ConfigMap{}
	if err := f.reader.Get(ctx, client.ObjectKey{Namespace: authConfigNamespace, Name: authConfigName}, cm); err != nil {
		if f.cur != nil {
			return f.cur, nil
		}
		return nil, fmt.Errorf("read ConfigMap %s/%s, which says how to verify the hub API server's proxied requests: %w", authConfigNamespace, authConfigName, err)
	}
	cfg, err := parseRequestHeaderConfig(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", authConfigNamespace, authConfigName, err)
	}
	f.cur, f.read = cfg, time.Now()
	return cfg, nil
}

// parseRequestHeaderConfig reads the requestheader-* keys of the ConfigMap.
func parseRequestHeaderConfig(data map[string]string) (*requestHeaderConfig, error) {
	caPEM := data["requestheader-client-ca-file"]
	if caPEM == "" {
		return nil, errors.New("no requestheader-client-ca-file: the hub's API server is not configured for aggregated APIs (--requestheader-client-ca-file, --proxy-client-cert-file); configure its aggregation layer")
	}
	cfg := &requestHeaderConfig{roots: x509.NewCertPool()}
	if !cfg.roots.AppendCertsFromPEM([]byte(caPEM)) {
		return nil, errors.New("requestheader-client-ca-file holds no PEM certificate")
	}
	for key, into := range map[string]*[]string{
		"requestheader-allowed-names":        &cfg.allowedNames,
		"requestheader-username-headers":     &cfg.userHeaders,
		"requestheader-uid-headers":          &cfg.uidHeaders,
		"requestheader-group-headers":        &cfg.groupHeaders,
		"requestheader-extra-headers-prefix": &cfg.extraPrefixes,
	} {
		if v := data[key]; v != "" {
			if err := json.Unmarshal([]byte(v), into); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if len(cfg.userHeaders) == 0 {
		return nil, errors.New("requestheader-username-headers is empty")
	}
	return cfg, nil
}

// verify checks that chain is a client certificate of the front proxy.
func (c *requestHeaderConfig) verify(chain []*x509.Certificate) error {
	intermediates := x509.NewCertPool()
	for _, cert := range chain[1:] {
		intermediates.AddCert(cert)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{
		Roots: c.roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return fmt.Errorf("the client certificate %q is not the hub API server's front proxy: %w", chain[0].Subject.CommonName, err)
	}
	if len(c.allowedNames) > 0 && !slices.Contains(c.allowedNames, chain[0].Subject.CommonName) {
		return fmt.Errorf("the client certificate %q is not one of the front proxy names %v", chain[0].Subject.CommonName, c.allowedNames)
	}
	return nil
}

// firstHeader returns the first non-empty value of the first of names that
// has one.
func firstHeader(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// cutPrefixFold is strings.CutPrefix ignoring case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
