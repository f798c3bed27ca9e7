package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
)

// DefaultSessionTimeout is how long a session over HTTP may stay idle (no
// request from its client) before the server closes it.
const DefaultSessionTimeout = 30 * time.Minute

// Handler returns the HTTP handler of srv, configured by cfg: the
// protocol's streamable HTTP transport (which refuses, on loopback, a Host
// that is not loopback: DNS rebinding), behind the refusal of cross-origin
// browser requests and of requests whose bearer token the hub does not
// accept. The hub says who each token is (a SelfSubjectReview with it); a
// session belongs to that user, so that another user's token cannot use
// it, and closes after cfg.SessionTimeout idle. It refuses a hub that
// CheckHTTPHub refuses.
func Handler(srv *mcp.Server, cfg Config) (http.Handler, error) {
	if err := CheckHTTPHub(cfg.Hub); err != nil {
		return nil, err
	}
	timeout := cfg.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{SessionTimeout: timeout})
	// Every request is verified again: the hub's answer is not kept, so a
	// token the hub stops accepting stops working at once. The hub's answer
	// carries no expiry, hence AllowMissingExpiration.
	verified := auth.RequireBearerToken(hubVerifier(cfg.Hub, cfg.CallTimeout), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := BearerToken(r.Header); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kubectl-ocm"`)
			http.Error(w, ErrNoBearerToken.Error(), http.StatusUnauthorized)
			return
		}
		verified.ServeHTTP(w, r)
	})), nil
}

// CheckHTTPHub refuses to serve over HTTP with hub, the configuration of
// the hub from the server's kubeconfig, when it would send the callers'
// tokens where they could be read: over plain HTTP, or over TLS whose
// server is not verified.
func CheckHTTPHub(hub *rest.Config) error {
	if hub == nil {
		return errors.New("no hub configuration: give a kubeconfig (--kubeconfig, --context)")
	}
	if u, err := url.Parse(hub.Host); err == nil && strings.EqualFold(u.Scheme, "http") {
		return fmt.Errorf("the hub's server %s is plain HTTP: over --listen the server sends each caller's hub token to the hub, which anyone on the way could read; use the hub's https URL in the kubeconfig", hub.Host)
	}
	if hub.Insecure {
		return fmt.Errorf("the kubeconfig skips the verification of the hub's certificate (insecure-skip-tls-verify, or --insecure-skip-tls-verify): over --listen the server sends each caller's hub token to the hub, and would send it to whoever answers in the hub's place; put the hub's CA in the kubeconfig (certificate-authority-data) and drop insecure-skip-tls-verify, or serve over stdio")
	}
	return nil
}

// hubVerifier returns the verifier of the callers' bearer tokens: it asks
// the hub, with the token, who its holder is (a SelfSubjectReview, which
// every authenticated user may create), and takes that user for the
// caller. A token the hub does not accept is auth.ErrInvalidToken (401).
func hubVerifier(hub *rest.Config, timeout time.Duration) auth.TokenVerifier {
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		cfg := rest.AnonymousClientConfig(hub)
		cfg.BearerToken = token
		cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " kubectl-ocm-mcp"
		cfg.Timeout = timeout
		c, err := authenticationclient.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("connect to the hub at %s: %w", hub.Host, err)
		}
		review, err := c.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		switch {
		case apierrors.IsUnauthorized(err):
			return nil, fmt.Errorf("%w: the hub does not accept the bearer token (401): send a hub token of your own in the Authorization header (Bearer <token>)", auth.ErrInvalidToken)
		case err != nil:
			return nil, hubError("ask the hub who the bearer token is (SelfSubjectReview)", err)
		}
		user := review.Status.UserInfo
		if user.Username == "" || user.Username == "system:anonymous" {
			return nil, fmt.Errorf("%w: the hub takes the bearer token for no user: send a hub token of your own", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: userID(user)}, nil
	}
}

// userID is the identity a session is bound to: the user's name and, when
// the hub gives one, its UID, so that a user deleted and made again under
// the same name is another user.
func userID(u authenticationv1.UserInfo) string {
	if u.UID == "" {
		return fmt.Sprintf("%q", u.Username)
	}
	return fmt.Sprintf("%q %q", u.Username, u.UID)
}
