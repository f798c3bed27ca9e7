package credentials

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	// The oidc auth provider, so that a hub user of auth-provider oidc is
	// run through client-go like an exec plugin.
	_ "k8s.io/client-go/plugin/pkg/client/auth/oidc"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// supported names the credentials the plugin passes on, for its errors.
const supported = "a token or token file, a client certificate and key, an exec plugin or an auth provider (oidc)"

// Run prints the ExecCredential of the hub credential on Out.
func (o *Options) Run(ctx context.Context) error {
	status, err := o.credential(ctx)
	if err != nil {
		return err
	}
	return json.NewEncoder(o.Out).Encode(&clientauthv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: hubtunnel.ExecAPIVersion, Kind: "ExecCredential"},
		Status:   status,
	})
}

// credential reads the hub credential: that of the kubeconfig of the
// kubectl flags, or the in-cluster ServiceAccount token when there is no
// kubeconfig. Under client-go it reads it only when the server it is asked
// for is served by the credential's hub (checkServer).
func (o *Options) credential(ctx context.Context) (*clientauthv1.ExecCredentialStatus, error) {
	cfg, err := o.getter.ToRESTConfig()
	if err != nil && !clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("load the hub kubeconfig: %w", err)
	}
	if err != nil || (!hasCredential(cfg) && o.noKubeconfig()) {
		status, err := o.inCluster()
		if err != nil {
			return nil, err
		}
		return status, o.checkServer(inClusterHub(o.getenv))
	}
	if err := o.checkServer(kubeconfigHub(cfg)); err != nil {
		return nil, err
	}
	return fromConfig(ctx, cfg)
}

// noKubeconfig reports whether no kubeconfig was found: client-go then
// gives a configuration without credentials for http://localhost:8080.
func (o *Options) noKubeconfig() bool {
	raw, err := o.getter.ToRawKubeConfigLoader().RawConfig()
	return err == nil && len(raw.Contexts) == 0 && len(raw.AuthInfos) == 0
}

// inCluster returns the token of the ServiceAccount of the Pod the plugin
// runs in.
func (o *Options) inCluster() (*clientauthv1.ExecCredentialStatus, error) {
	data, err := os.ReadFile(o.InClusterTokenFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no hub credential: no kubeconfig was found (--kubeconfig, KUBECONFIG or ~/.kube/config) and this is no Pod with a ServiceAccount token at %s; point KUBECONFIG (or --kubeconfig, --context) at your hub kubeconfig", o.InClusterTokenFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read the ServiceAccount token: %w", err)
	}
	return tokenStatus(strings.TrimSpace(string(data)))
}

// hasCredential reports whether cfg carries any credential.
func hasCredential(cfg *rest.Config) bool {
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		cfg.CertFile != "" || len(cfg.CertData) > 0 || cfg.KeyFile != "" || len(cfg.KeyData) > 0 ||
		cfg.ExecProvider != nil || cfg.AuthProvider != nil
}

// fromConfig returns the credential of cfg.
func fromConfig(ctx context.Context, cfg *rest.Config) (*clientauthv1.ExecCredentialStatus, error) {
	if imp := cfg.Impersonate; imp.UserName != "" || imp.UID != "" || len(imp.Groups) > 0 || len(imp.Extra) > 0 {
		return nil, errors.New("the hub user impersonates another (--as, --as-group or as: in the kubeconfig), which an ExecCredential cannot carry: use the impersonated user's own credential")
	}
	if cfg.ExecProvider != nil && runsItself(cfg.ExecProvider) {
		return nil, fmt.Errorf("the hub user's exec plugin is %s %s itself, which would run forever: point KUBECONFIG (or --kubeconfig, --context) at the kubeconfig of your own hub user",
			cfg.ExecProvider.Command, strings.Join(cfg.ExecProvider.Args, " "))
	}
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
		return throughClientGo(ctx, cfg)
	}
	status := &clientauthv1.ExecCredentialStatus{}
	switch {
	case cfg.BearerTokenFile != "":
		data, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("read the hub user's token file: %w", err)
		}
		status.Token = strings.TrimSpace(string(data))
	default:
		status.Token = cfg.BearerToken
	}
	cert, err := dataOrFile(cfg.CertData, cfg.CertFile, "client certificate")
	if err != nil {
		return nil, err
	}
	key, err := dataOrFile(cfg.KeyData, cfg.KeyFile, "client key")
	if err != nil {
		return nil, err
	}
	if (len(cert) == 0) != (len(key) == 0) {
		return nil, errors.New("the hub user has a client certificate without its key, or a key without its certificate: give both")
	}
	status.ClientCertificateData, status.ClientKeyData = string(cert), string(key)
	if status.Token == "" && len(cert) == 0 {
		if cfg.Username != "" || cfg.Password != "" {
			return nil, errors.New("the hub user authenticates with a username and password, which an ExecCredential cannot carry: use " + supported)
		}
		return nil, errors.New("the hub user of the kubeconfig (--kubeconfig or KUBECONFIG, --context) has no credential: give it " + supported)
	}
	return withExpiry(status)
}

// dataOrFile returns data, or the content of file.
func dataOrFile(data []byte, file, what string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the hub user's %s: %w", what, err)
	}
	return data, nil
}

// runsItself reports whether exec runs `kubectl-ocm credentials` (or
// `kubectl ocm credentials`).
func runsItself(exec *clientcmdapi.ExecConfig) bool {
	base, args := filepath.Base(exec.Command), exec.Args
	if base == "kubectl" && len(args) > 0 && args[0] == "ocm" {
		base, args = hubtunnel.CredentialsCommand, args[1:]
	}
	return strings.HasPrefix(base, hubtunnel.CredentialsCommand) && slices.Contains(args, hubtunnel.CredentialsArgs()[0])
}

// throughClientGo runs the exec plugin or auth provider of cfg through
// client-go, as a request with cfg would, and returns the token it sets or
// the client certificate it presents.
func throughClientGo(ctx context.Context, cfg *rest.Config) (*clientauthv1.ExecCredentialStatus, error) {
	what := "auth provider " + authProviderName(cfg)
	if cfg.ExecProvider != nil {
		what = "exec plugin " + cfg.ExecProvider.Command
	}
	var authorization string
	rt, err := rest.HTTPWrappersForConfig(cfg, roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		authorization = r.Header.Get("Authorization")
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}))
	if err != nil {
		return nil, fmt.Errorf("the hub user's %s: %w", what, err)
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host, nil)
	if err != nil {
		return nil, fmt.Errorf("the hub user's %s: %w", what, err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("the hub user's %s: %w", what, err)
	}
	_ = resp.Body.Close()
	status := &clientauthv1.ExecCredentialStatus{}
	if token, ok := strings.CutPrefix(authorization, "Bearer "); ok {
		status.Token = token
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the hub user's %s: %w", what, err)
	}
	if tlsConfig != nil && tlsConfig.GetClientCertificate != nil {
		cert, err := tlsConfig.GetClientCertificate(&tls.CertificateRequestInfo{})
		if err != nil {
			return nil, fmt.Errorf("the hub user's %s: %w", what, err)
		}
		if cert != nil && len(cert.Certificate) > 0 {
			if status.ClientCertificateData, status.ClientKeyData, err = encodeCertificate(cert); err != nil {
				return nil, fmt.Errorf("the hub user's %s: %w", what, err)
			}
		}
	}
	if status.Token == "" && status.ClientCertificateData == "" {
		return nil, fmt.Errorf("the hub user's %s gave neither a bearer token nor a client certificate", what)
	}
	return withExpiry(status)
}

// authProviderName is the name of cfg's auth provider.
func authProviderName(cfg *rest.Config) string {
	if cfg.AuthProvider == nil {
		return ""
	}
	return cfg.AuthProvider.Name
}

// encodeCertificate returns cert's chain and key in PEM.
func encodeCertificate(cert *tls.Certificate) (certPEM, keyPEM string, err error) {
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})...)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return "", "", fmt.Errorf("encode the client key: %w", err)
	}
	return string(chain), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})), nil
}

// tokenStatus returns the credential of token, with its expiry.
func tokenStatus(token string) (*clientauthv1.ExecCredentialStatus, error) {
	if token == "" {
		return nil, errors.New("the ServiceAccount token file is empty")
	}
	return withExpiry(&clientauthv1.ExecCredentialStatus{Token: token})
}

// withExpiry sets the expirationTimestamp of status: the earlier of the
// token's exp claim, when the token is a JWT, and the client certificate's
// end of validity. It is unset when neither is known: client-go then keeps
// the credential until the server refuses it.
func withExpiry(status *clientauthv1.ExecCredentialStatus) (*clientauthv1.ExecCredentialStatus, error) {
	var expiry time.Time
	if exp, ok := kubeconfig.JWTExpiry(status.Token); ok {
		expiry = exp
	}
	if status.ClientCertificateData != "" {
		certs, err := certutil.ParseCertsPEM([]byte(status.ClientCertificateData))
		if err != nil {
			return nil, fmt.Errorf("the hub user's client certificate: %w", err)
		}
		if end := certs[0].NotAfter; expiry.IsZero() || end.Before(expiry) {
			expiry = end
		}
	}
	if !expiry.IsZero() {
		status.ExpirationTimestamp = &metav1.Time{Time: expiry}
	}
	return status, nil
}

// roundTripperFunc is a function as an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
