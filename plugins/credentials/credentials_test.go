package credentials

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// jwt returns an unsigned JWT whose payload is claims.
func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
}

// writeFile writes data to name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeconfigWith writes a kubeconfig whose current context's user is user
// and returns flags that load it ("" and nil user: an empty file).
func kubeconfigWith(t *testing.T, user *clientcmdapi.AuthInfo) *genericclioptions.ConfigFlags {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if user == nil {
		writeFile(t, filepath.Dir(path), "kubeconfig", nil)
	} else {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://hub.example.com:6443"}
		cfg.AuthInfos["me"] = user
		cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "me"}
		cfg.CurrentContext = "hub"
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = ptr.To(path)
	return flags
}

// run runs the plugin with flags, KUBERNETES_EXEC_INFO execInfo and the
// in-cluster token file tokenFile, and returns the ExecCredential it
// printed, its stderr and its error.
func run(t *testing.T, flags *genericclioptions.ConfigFlags, execInfo, tokenFile string) (*clientauthv1.ExecCredential, string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := NewOptions(flags, streams)
	o.getenv = func(name string) string {
		if name == ExecInfoEnv {
			return execInfo
		}
		return ""
	}
	if tokenFile != "" {
		o.InClusterTokenFile = tokenFile
	}
	err := o.Complete(nil, nil)
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		err = o.Run(context.Background())
	}
	if err != nil {
		if out.Len() > 0 {
			t.Errorf("stdout is not empty on an error: %s", out)
		}
		return nil, errOut.String(), err
	}
	cred := &clientauthv1.ExecCredential{}
	dec := json.NewDecoder(out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(cred); err != nil {
		t.Fatalf("stdout is not an ExecCredential: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("stdout holds more than the ExecCredential")
	}
	if cred.APIVersion != hubtunnel.ExecAPIVersion || cred.Kind != "ExecCredential" || cred.Status == nil {
		t.Errorf("ExecCredential %+v", cred)
	}
	return cred, errOut.String(), nil
}

func TestCredentials(t *testing.T) {
	// Not in a Pod, whatever the host: client-go's own in-cluster
	// configuration would take the place of the token file given.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	exp := time.Date(2031, 5, 4, 3, 2, 1, 0, time.UTC)
	token := jwt(fmt.Sprintf(`{"iss":"https://kubernetes.default.svc","exp":%d,"sub":"system:serviceaccount:apps:robot"}`, exp.Unix()))
	tokenFile := writeFile(t, dir, "token", []byte(token+"\n"))
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writeFile(t, dir, "alice.crt", certPEM), writeFile(t, dir, "alice.key", keyPEM)
	// An exec plugin that prints a token, as client-go expects.
	execToken := writeFile(t, dir, "exec-token.sh", []byte("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'\n"))
	execCert := writeFile(t, dir, "exec-cert.sh", fmt.Appendf(nil, "#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n", mustJSON(t, &clientauthv1.ExecCredential{
		Status: &clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: string(keyPEM)},
	})))
	inCluster := writeFile(t, dir, "sa-token", []byte(token))
	v1Request := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`

	tests := []struct {
		name      string
		user      *clientcmdapi.AuthInfo
		execInfo  string
		inCluster string
		want      clientauthv1.ExecCredentialStatus
		wantErr   string
	}{
		{name: "token file, a JWT: its exp is the expiration", user: &clientcmdapi.AuthInfo{TokenFile: tokenFile}, execInfo: v1Request,
			want: clientauthv1.ExecCredentialStatus{Token: token, ExpirationTimestamp: timePtr(exp)}},
		{name: "a token that is no JWT has no expiration", user: &clientcmdapi.AuthInfo{Token: "opaque-token"},
			want: clientauthv1.ExecCredentialStatus{Token: "opaque-token"}},
		{name: "client certificate files: the certificate's end is the expiration", user: &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: string(keyPEM), ExpirationTimestamp: timePtr(certs[0].NotAfter)}},
		{name: "client certificate data", user: &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: string(keyPEM), ExpirationTimestamp: timePtr(certs[0].NotAfter)}},
		{name: "an exec plugin's token, through client-go", user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: hubtunnel.ExecAPIVersion, Command: execToken, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			want: clientauthv1.ExecCredentialStatus{Token: "from-exec"}},
		{name: "an exec plugin's certificate, through client-go", user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: hubtunnel.ExecAPIVersion, Command: execCert, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: "PKCS8", ExpirationTimestamp: timePtr(certs[0].NotAfter)}},
		{name: "no kubeconfig: the in-cluster ServiceAccount token", inCluster: inCluster,
			want: clientauthv1.ExecCredentialStatus{Token: token, ExpirationTimestamp: timePtr(exp)}},
		{name: "no kubeconfig and no in-cluster token", inCluster: filepath.Join(dir, "missing"),
			wantErr: "no kubeconfig was found"},
		{name: "KUBERNETES_EXEC_INFO of another apiVersion", user: &clientcmdapi.AuthInfo{Token: "t"},
			execInfo: `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{}}`,
			wantErr:  `asks for an ExecCredential of apiVersion "client.authentication.k8s.io/v1beta1"; kubectl-ocm credentials prints client.authentication.k8s.io/v1`},
		{name: "KUBERNETES_EXEC_INFO that is no ExecCredential", user: &clientcmdapi.AuthInfo{Token: "t"}, execInfo: `{"apiVersion":"v1","kind":"Pod"}`,
			wantErr: "not an ExecCredential"},
		{name: "basic authentication", user: &clientcmdapi.AuthInfo{Username: "admin", Password: "secret"}, wantErr: "username and password"},
		{name: "impersonation", user: &clientcmdapi.AuthInfo{Token: "t", Impersonate: "bob"}, wantErr: "impersonates another"},
		{name: "a user without a credential", user: &clientcmdapi.AuthInfo{}, wantErr: "has no credential: give it a token"},
		{name: "a certificate without its key", user: &clientcmdapi.AuthInfo{ClientCertificate: certFile}, wantErr: "client-key-data or client-key must be specified"},
		{name: "itself as the exec plugin", user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: hubtunnel.ExecAPIVersion, Command: "/usr/local/bin/kubectl-ocm", Args: []string{"credentials"}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			wantErr: "which would run forever"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, stderr, err := run(t, kubeconfigWith(t, tt.user), tt.execInfo, tt.inCluster)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr)
			}
			got := cred.Status
			if tt.want.ClientKeyData == "PKCS8" {
				// Re-encoded from the TLS key pair client-go loaded.
				if !strings.HasPrefix(got.ClientKeyData, "-----BEGIN PRIVATE KEY-----") {
					t.Errorf("key = %q", got.ClientKeyData)
				}
				got.ClientKeyData = "PKCS8"
			}
			if got.Token != tt.want.Token || got.ClientCertificateData != tt.want.ClientCertificateData || got.ClientKeyData != tt.want.ClientKeyData {
				t.Errorf("status = %+v, want %+v", got, tt.want)
			}
			if !equalTime(got.ExpirationTimestamp, tt.want.ExpirationTimestamp) {
				t.Errorf("expirationTimestamp = %v, want %v", got.ExpirationTimestamp, tt.want.ExpirationTimestamp)
			}
		})
	}
}

func TestJWTExpiry(t *testing.T) {
	tests := []struct {
		token string
		want  int64
	}{
		{jwt(`{"exp":1900000000}`), 1900000000},
		{jwt(`{"exp":1900000000.5}`), 1900000000},
		{jwt(`{"sub":"x"}`), 0},
		{jwt(`not json`), 0},
		{"opaque", 0},
		{"a.b.c", 0},
		{"abcdef.0123456789abcdef", 0}, // a bootstrap token
	}
	for _, tt := range tests {
		got, ok := JWTExpiry(tt.token)
		if ok != (tt.want != 0) || ok && got.Unix() != tt.want {
			t.Errorf("JWTExpiry(%q) = %v, %v; want %d", tt.token, got, ok, tt.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	cred := v.(*clientauthv1.ExecCredential)
	cred.APIVersion, cred.Kind = hubtunnel.ExecAPIVersion, "ExecCredential"
	data, err := json.Marshal(cred)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func timePtr(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// equalTime compares two expirations to the second, as JSON carries them.
func equalTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}
