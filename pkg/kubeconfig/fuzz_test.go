package kubeconfig

import (
	"crypto/x509/pkix"
	"testing"
	"time"
)

// fuzzKubeconfig is a hub credential kubeconfig that names its certificate
// and key by file, as OCM writes it.
const fuzzKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://hub.example:6443
    certificate-authority: /var/run/secrets/ca.crt
contexts:
- name: default
  context: {cluster: hub, user: agent}
current-context: default
users:
- name: agent
  user:
    client-certificate: tls.crt
    client-key: tls.key
`

// FuzzSecretKubeconfig reads arbitrary kubeconfig Secrets (bootstrap and hub
// credential): it never panics, and a kubeconfig it accepts has a server and
// leaves no file to read: every file it named came from the Secret.
func FuzzSecretKubeconfig(f *testing.F) {
	f.Add([]byte(fuzzKubeconfig), []byte("CA"), []byte("CERT"), []byte("KEY"), "c1", "a1")
	f.Add([]byte("apiVersion: v1\nkind: Config\ncurrent-context: x\n"), []byte(nil), []byte(nil), []byte(nil), "", "")
	f.Add([]byte(`{"clusters":[{"name":"h","cluster":{"server":"https://h"}}],"contexts":[{"name":"c","context":{"cluster":"h","user":"u"}}],"current-context":"c","users":[{"name":"u","user":{"tokenFile":"/etc/passwd"}}]}`),
		[]byte(nil), []byte(nil), []byte(nil), "", "")
	f.Add([]byte(`{"clusters":[{"name":"h","cluster":{"server":"https://h"}}],"contexts":[{"name":"c","context":{"cluster":"h","user":"u"}}],"current-context":"c","users":[{"name":"u","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"/bin/sh"}}}]}`),
		[]byte(nil), []byte(nil), []byte(nil), "", "")
	f.Add([]byte("{{{"), []byte("x"), []byte("y"), []byte("z"), "c", "a")
	f.Fuzz(func(t *testing.T, raw, ca, cert, key []byte, cluster, agent string) {
		data := map[string][]byte{KubeconfigKey: raw, "ca.crt": ca, TLSCertKey: cert, TLSKeyKey: key, ClusterNameKey: []byte(cluster), AgentNameKey: []byte(agent)}
		info, err := FromSecret(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if info.Server == "" {
			t.Fatal("accepted a kubeconfig without a server")
		}
		for _, ctx := range info.config.Contexts {
			if a := info.config.AuthInfos[ctx.AuthInfo]; a != nil && (a.ClientCertificate != "" || a.ClientKey != "" || a.TokenFile != "" || a.Exec != nil || a.AuthProvider != nil) {
				t.Fatalf("a file is left to read: %+v", a)
			}
			if c := info.config.Clusters[ctx.Cluster]; c != nil && c.CertificateAuthority != "" {
				t.Fatalf("a CA file is left to read: %s", c.CertificateAuthority)
			}
		}
		if cfg, err := info.RESTConfig(); err == nil && (cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "" || cfg.ExecProvider != nil || cfg.AuthProvider != nil) {
			t.Fatalf("client configuration reads files: %+v", cfg.TLSClientConfig)
		}
		cred, err := ReadHubCredential(data)
		if err != nil {
			t.Fatalf("FromSecret accepted what ReadHubCredential refuses: %v", err)
		}
		if _, err := cred.Validate(pkix.Name{CommonName: cluster}, time.Now()); err == nil && len(cert) == 0 {
			t.Fatal("validated a credential without a certificate")
		}
	})
}
