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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// testHub is the server of the kubeconfigs of kubeconfigWith.
const testHub = "https://hub.example.com:6443"

// kubeconfigWith writes a kubeconfig whose current context's user is user
// and whose server is testHub, and returns flags that load it (nil user: an
// empty file).
func kubeconfigWith(t *testing.T, user *clientcmdapi.AuthInfo) *genericclioptions.ConfigFlags {
	t.Helper()
	return kubeconfigAt(t, testHub, user)
}

// kubeconfigAt is kubeconfigWith for a hub at server.
func kubeconfigAt(t *testing.T, server string, user *clientcmdapi.AuthInfo) *genericclioptions.ConfigFlags {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if user == nil {
		writeFile(t, filepath.Dir(path), "kubeconfig", nil)
	} else {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: server}
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
	return runWithEnv(t, flags, map[string]string{ExecInfoEnv: execInfo}, tokenFile)
}

// runWithEnv is run with the environment env.
func runWithEnv(t *testing.T, flags *genericclioptions.ConfigFlags, env map[string]string, tokenFile string) (*clientauthv1.ExecCredential, string, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := NewOptions(flags, streams)
	o.getenv = func(name string) string { return env[name] }
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
	v1Request := execInfo(testHub + hubtunnel.ProxyPath("c1"))

	tests := []struct {
		name      string
		user      *clientcmdapi.AuthInfo
		execInfo  string
		inCluster string
		want      clientauthv1.ExecCredentialStatus
		wantErr   string
	}{
		{name: "token file, a JWT: its exp is the expiration", user: &clientcmdapi.AuthInfo{TokenFile: tokenFile}, execInfo: v1Request,
			want: clientauthv1.ExecCredentialStatus{Token: token, ExpirationTimestamp: ptr.To(metav1.NewTime(exp))}},
		{name: "a token that is no JWT has no expiration", user: &clientcmdapi.AuthInfo{Token: "opaque-token"},
			want: clientauthv1.ExecCredentialStatus{Token: "opaque-token"}},
		{name: "client certificate files: the certificate's end is the expiration", user: &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: string(keyPEM), ExpirationTimestamp: ptr.To(metav1.NewTime(certs[0].NotAfter))}},
		{name: "client certificate data", user: &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: string(keyPEM), ExpirationTimestamp: ptr.To(metav1.NewTime(certs[0].NotAfter))}},
		{name: "an exec plugin's token, through client-go", user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: hubtunnel.ExecAPIVersion, Command: execToken, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			want: clientauthv1.ExecCredentialStatus{Token: "from-exec"}},
		{name: "an exec plugin's certificate, through client-go", user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: hubtunnel.ExecAPIVersion, Command: execCert, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			want: clientauthv1.ExecCredentialStatus{ClientCertificateData: string(certPEM), ClientKeyData: "PKCS8", ExpirationTimestamp: ptr.To(metav1.NewTime(certs[0].NotAfter))}},
		{name: "no kubeconfig: the in-cluster ServiceAccount token", inCluster: inCluster,
			want: clientauthv1.ExecCredentialStatus{Token: token, ExpirationTimestamp: ptr.To(metav1.NewTime(exp))}},
		{name: "no kubeconfig and no in-cluster token", inCluster: filepath.Join(dir, "missing"),
			wantErr: "no kubeconfig was found"},
		{name: "KUBERNETES_EXEC_INFO of another apiVersion", user: &clientcmdapi.AuthInfo{Token: "t"},
			execInfo: `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{}}`,
			wantErr:  `asks for an ExecCredential of apiVersion "client.authentication.k8s.io/v1beta1"; kubectl-ocm credentials prints client.authentication.k8s.io/v1`},
		{name: "KUBERNETES_EXEC_INFO that is no ExecCredential", user: &clientcmdapi.AuthInfo{Token: "t"}, execInfo: `{"apiVersion":"v1","kind":"Pod"}`,
			wantErr: `KUBERNETES_EXEC_INFO holds a "Pod", not an ExecCredential`},
		{name: "KUBERNETES_EXEC_INFO that is no JSON", user: &clientcmdapi.AuthInfo{Token: "t"}, execInfo: `apiVersion: v1`,
			wantErr: "KUBERNETES_EXEC_INFO is not an ExecCredential: "},
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
				require.ErrorContains(t, err, tt.wantErr)
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

// execInfo returns the KUBERNETES_EXEC_INFO client-go sets for an exec
// section with provideClusterInfo and a cluster whose server is server.
func execInfo(server string) string {
	return fmt.Sprintf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":%q,"certificate-authority-data":"Q0E=","config":{"clusterName":"c1"}}}}`, server)
}

// TestServerBinding: under client-go, the plugin hands the hub credential
// only to the hub tunnel of the credential's own hub, and names the server,
// the hub and the fix when it refuses.
func TestServerBinding(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	token := writeFile(t, t.TempDir(), "sa-token", []byte("sa-token"))
	proxy := hubtunnel.ProxyPath("c1")
	inPod := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	tests := []struct {
		name string
		// hub is the server of the credential's kubeconfig; "" for none
		// (the Pod's ServiceAccount token).
		hub string
		// execInfo is KUBERNETES_EXEC_INFO; env the rest of the
		// environment.
		execInfo string
		env      map[string]string
		// wantErr are parts of the error; none: the credential is printed.
		wantErr []string
	}{
		{name: "the hub's proxy path", hub: testHub, execInfo: execInfo(testHub + proxy)},
		{name: "the default port made explicit", hub: "https://hub.example.com", execInfo: execInfo("https://hub.example.com:443" + proxy)},
		{name: "the host in other case", hub: testHub, execInfo: execInfo("https://HUB.example.com:6443" + proxy)},
		{name: "a hub under a path prefix", hub: "https://lb.example.com/k8s/hub", execInfo: execInfo("https://lb.example.com/k8s/hub" + proxy)},
		{name: "run by hand: no KUBERNETES_EXEC_INFO", hub: testHub},
		{name: "without provideClusterInfo", hub: testHub,
			execInfo: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`,
			wantErr:  []string{"KUBERNETES_EXEC_INFO names no server", "provideClusterInfo: true", "--exec-provide-cluster-info=true"}},
		{name: "another host", hub: testHub, execInfo: execInfo("https://evil.example.com:6443" + proxy),
			wantErr: []string{`refusing to hand the credential for hub https://hub.example.com:6443 (your kubeconfig's user)`, `to server "https://evil.example.com:6443` + proxy + `": it is not that hub`,
				"a hub kubeconfig whose server is https://evil.example.com:6443", "must not run kubectl-ocm credentials"}},
		{name: "another port", hub: testHub, execInfo: execInfo("https://hub.example.com:7443" + proxy), wantErr: []string{"it is not that hub"}},
		{name: "another scheme", hub: testHub, execInfo: execInfo("http://hub.example.com:6443" + proxy), wantErr: []string{"it is not that hub"}},
		{name: "a host that only starts like the hub's", hub: testHub, execInfo: execInfo("https://hub.example.com.evil.example:6443" + proxy), wantErr: []string{"it is not that hub"}},
		{name: "a user in the URL", hub: testHub, execInfo: execInfo("https://hub.example.com:6443@evil.example.com" + proxy), wantErr: []string{"it is not that hub"}},
		{name: "the hub's core API", hub: testHub, execInfo: execInfo(testHub + "/api/v1/namespaces/kube-system/secrets"),
			wantErr: []string{`its path "/api/v1/namespaces/kube-system/secrets" is not under /apis/proxy.kubectl-ocm.io/`, "https://hub.example.com:6443" + hubtunnel.ProxyPath("CLUSTER")}},
		{name: "the hub's root", hub: testHub, execInfo: execInfo(testHub), wantErr: []string{"is not under /apis/proxy.kubectl-ocm.io/"}},
		{name: "a path that leaves the API", hub: testHub, execInfo: execInfo(testHub + "/apis/proxy.kubectl-ocm.io/../../api/v1/secrets"), wantErr: []string{`has a ".." segment`}},
		{name: "an escaped path that leaves the API", hub: testHub, execInfo: execInfo(testHub + "/apis/proxy.kubectl-ocm.io/%2e%2e/%2e%2e/api/v1/secrets"), wantErr: []string{`has a ".." segment`}},
		{name: "a query", hub: testHub, execInfo: execInfo(testHub + proxy + "?x=1"), wantErr: []string{"user, query or fragment"}},
		{name: "outside the hub's path prefix", hub: "https://lb.example.com/k8s/hub", execInfo: execInfo("https://lb.example.com/k8s/other" + proxy),
			wantErr: []string{"is not under /k8s/hub/apis/proxy.kubectl-ocm.io/"}},
		{name: "insecure-skip-tls-verify", hub: testHub,
			execInfo: strings.Replace(execInfo(testHub+proxy), `"server"`, `"insecure-skip-tls-verify":true,"server"`, 1),
			wantErr:  []string{"insecure-skip-tls-verify: anyone between could take the credential"}},
		{name: "in a Pod: the in-cluster API server", execInfo: execInfo("https://10.96.0.1:443" + proxy), env: inPod},
		{name: "in a Pod: another server", execInfo: execInfo(testHub + proxy), env: inPod,
			wantErr: []string{"refusing to hand the credential for hub https://10.96.0.1:443 (the Pod's ServiceAccount token)", "it is not that hub"}},
		{name: "a ServiceAccount token outside a Pod", execInfo: execInfo("https://10.96.0.1:443" + proxy),
			wantErr: []string{"cannot tell which hub the hub credential (the Pod's ServiceAccount token) is for", "KUBERNETES_SERVICE_HOST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags := kubeconfigWith(t, nil)
			if tt.hub != "" {
				flags = kubeconfigAt(t, tt.hub, &clientcmdapi.AuthInfo{Token: "hub-token"})
			}
			env := map[string]string{ExecInfoEnv: tt.execInfo}
			for k, v := range tt.env {
				env[k] = v
			}
			cred, _, err := runWithEnv(t, flags, env, token)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if cred.Status.Token == "" {
					t.Errorf("no token printed: %+v", cred.Status)
				}
				return
			}
			if err == nil {
				t.Fatalf("printed %+v, want an error", cred.Status)
			}
			for _, want := range tt.wantErr {
				assert.ErrorContains(t, err, want)
			}
		})
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

// equalTime compares two expirations to the second, as JSON carries them.
func equalTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}
