package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// forwarder sends what the hub sends through the tunnel to the managed
// cluster's API server as the mapped identity of the hub user.
type forwarder struct {
	target *url.URL
	// plain sends ordinary requests; upgrade sends upgrade requests (exec,
	// attach, port-forward) over HTTP/1.1, which upgrades need.
	plain, upgrade http.RoundTripper
}

func newForwarder(cfg *rest.Config) (*forwarder, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("the managed cluster's API server %q is not a URL", cfg.Host)
	}
	if target.Scheme == "" {
		target.Scheme = "https"
	}
	plain, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("transport to the managed cluster: %w", err)
	}
	h1 := rest.CopyConfig(cfg)
	h1.NextProtos = []string{"http/1.1"}
	upgrade, err := rest.TransportFor(h1)
	if err != nil {
		return nil, fmt.Errorf("upgrade transport to the managed cluster: %w", err)
	}
	return &forwarder{target: target, plain: plain, upgrade: upgrade}, nil
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user := r.Header.Get(hubtunnel.UserHeader)
	if user == "" {
		http.Error(w, "the hub named no user for this request", http.StatusForbidden)
		return
	}
	groups := r.Header.Values(hubtunnel.GroupHeader)
	transport := f.plain
	if isUpgrade(r) {
		transport = f.upgrade
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(f.target)
			pr.Out.Host = f.target.Host
			if f.target.Path == "" || f.target.Path == "/" {
				pr.Out.URL.Path, pr.Out.URL.RawPath = r.URL.Path, r.URL.RawPath
			}
			hubtunnel.StripCredentials(pr.Out.Header)
			pr.Out.Header.Set("Impersonate-User", hubtunnel.MappedUser(user))
			for _, g := range hubtunnel.MappedGroups(groups) {
				pr.Out.Header.Add("Impersonate-Group", g)
			}
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			http.Error(w, "the agent cannot reach its cluster's API server: "+strings.TrimSpace(err.Error()), http.StatusBadGateway)
		},
	}
	proxy.ServeHTTP(w, r)
}

// isUpgrade reports whether r asks to upgrade its connection (Connection:
// Upgrade), as exec, attach and port-forward do.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, token := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "upgrade") {
				return true
			}
		}
	}
	return false
}
