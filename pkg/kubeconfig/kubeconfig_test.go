package kubeconfig

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestForClientCertificate(t *testing.T) {
	data, err := ForClientCertificate("https://hub:6443", []byte("CA"), []byte("CERT"), []byte("KEY"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "default-context" || cfg.Contexts["default-context"].AuthInfo != "default-auth" {
		t.Errorf("context %q / user %+v, want default-context / default-auth", cfg.CurrentContext, cfg.Contexts[cfg.CurrentContext])
	}
	info, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Server != "https://hub:6443" || string(info.CAData) != "CA" || string(info.CertData) != "CERT" || string(info.KeyData) != "KEY" {
		t.Errorf("Parse = %+v", info)
	}
}

func TestParse(t *testing.T) {
	token, _ := ForToken("https://hub:6443", []byte("CA"), "tok")
	proxied, _ := WithProxy(token, "http://proxy:3128")
	tests := []struct {
		name            string
		data            string
		wantErrContains string
		check           func(*Info) bool
	}{
		{name: "token", data: string(token), check: func(i *Info) bool { return i.Token == "tok" && i.Server == "https://hub:6443" }},
		{name: "proxy", data: string(proxied), check: func(i *Info) bool { return i.ProxyURL == "http://proxy:3128" }},
		{name: "garbage", data: "{", wantErrContains: "decode kubeconfig"},
		{name: "no current context", data: "apiVersion: v1\nkind: Config\n", wantErrContains: "no current context"},
		{name: "CA file", data: `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: h, user: u}}]
clusters: [{name: h, cluster: {server: "https://h", certificate-authority: /ca.crt}}]
users: [{name: u, user: {token: t}}]
`, wantErrContains: "CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := Parse([]byte(tt.data))
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErrContains)
				}
				return
			}
			if err != nil || !tt.check(info) {
				t.Errorf("Parse = %+v, %v", info, err)
			}
		})
	}
}

func TestSameHub(t *testing.T) {
	a := &Info{Server: "https://hub", CAData: []byte("CA")}
	tests := []struct {
		name string
		b    *Info
		want bool
	}{
		{"same", &Info{Server: "https://hub", CAData: []byte("CA"), Token: "x"}, true},
		{"other server", &Info{Server: "https://other", CAData: []byte("CA")}, false},
		{"other CA", &Info{Server: "https://hub", CAData: []byte("CA2")}, false},
		{"proxy", &Info{Server: "https://hub", CAData: []byte("CA"), ProxyURL: "http://p"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameHub(a, tt.b); got != tt.want {
				t.Errorf("SameHub = %v, want %v", got, tt.want)
			}
		})
	}
}
