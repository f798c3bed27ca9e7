package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
	certutil "k8s.io/client-go/util/cert"
)

// TestFromSecretContext checks how FromSecret reads the current context;
// TestFromSecret checks how it reads the files a kubeconfig names.
func TestFromSecretContext(t *testing.T) {
	token, _ := ForToken("https://hub:6443", []byte("CA"), "tok")
	viaProxy, _ := ForTokenVia("https://hub:6443", []byte("CA"), "http://proxy:3128", "tok")
	proxied, _ := forClientCertificate(&Info{Server: "https://hub:6443", ProxyURL: "http://proxy:3128"}, []byte("CERT"), []byte("KEY"))
	// A context whose user the kubeconfig lacks, or that names none, sends
	// no credentials, as client-go's loader does.
	withoutUser := "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- {name: c, context: {cluster: h, user: missing}}\nclusters:\n- {name: h, cluster: {server: \"https://h\"}}\n"
	noUser := "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- {name: c, context: {cluster: h}}\nclusters:\n- {name: h, cluster: {server: \"https://h\"}}\n"
	anonymous := func(i *Info) bool {
		cfg, err := i.RESTConfig()
		return err == nil && i.Server == "https://h" && i.Token == "" && len(i.CertData) == 0 &&
			cfg.Host == "https://h" && cfg.BearerToken == "" && len(cfg.CertData) == 0
	}
	// Empty names are names: client-go's loader reads them so.
	emptyNames := "apiVersion: v1\nkind: Config\ncurrent-context: \"\"\ncontexts:\n- {name: \"\", context: {cluster: \"\", user: \"\"}}\n" +
		"clusters:\n- {name: \"\", cluster: {server: \"https://h\"}}\nusers:\n- {name: \"\", user: {token: t}}\n"
	tests := []struct {
		name            string
		data            string
		wantErrContains string
		check           func(*Info) bool
	}{
		{name: "token", data: string(token), check: func(i *Info) bool { return i.Token == "tok" && i.Server == "https://hub:6443" }},
		{name: "bootstrap through a proxy", data: string(viaProxy), check: func(i *Info) bool { return i.Token == "tok" && i.ProxyURL == "http://proxy:3128" }},
		{name: "proxy", data: string(proxied), check: func(i *Info) bool { return i.ProxyURL == "http://proxy:3128" }},
		{name: "garbage", data: "{", wantErrContains: "decode kubeconfig"},
		{name: "no current context", data: "apiVersion: v1\nkind: Config\n", wantErrContains: "no current context"},
		{name: "no server", data: kubeconfigYAML(`{}`, `{token: t}`), wantErrContains: "names no cluster with a server"},
		{name: "other contexts are not read", data: kubeconfigYAML(`{server: "https://h"}`, `{token: t}`), check: func(i *Info) bool { return i.Server == "https://h" }},
		{name: "missing user: no credentials", data: withoutUser, check: anonymous},
		{name: "no user: no credentials", data: noUser, check: anonymous},
		{name: "empty names", data: emptyNames, check: func(i *Info) bool {
			cfg, err := i.RESTConfig()
			return err == nil && i.Token == "t" && cfg.Host == "https://h" && cfg.BearerToken == "t"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := FromSecret(map[string][]byte{KubeconfigKey: []byte(tt.data)})
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				return
			}
			require.NoError(t, err)
			if !tt.check(info) {
				t.Errorf("FromSecret = %+v", info)
			}
		})
	}
}

func TestRESTConfig(t *testing.T) {
	parsed, err := FromSecret(map[string][]byte{KubeconfigKey: []byte(kubeconfigYAML(`{server: "https://h:6443", insecure-skip-tls-verify: true, tls-server-name: hub.example}`, `{token: t}`))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		info      *Info
		wantHost  string
		wantToken string
		check     func(insecure bool, serverName string) bool
	}{
		{name: "parsed keeps every field of the kubeconfig", info: parsed, wantHost: "https://h:6443", wantToken: "t",
			check: func(insecure bool, serverName string) bool { return insecure && serverName == "hub.example" }},
		{name: "built by hand", info: &Info{Server: "https://hub", CAData: []byte("CA"), Token: "tok"}, wantHost: "https://hub", wantToken: "tok",
			check: func(insecure bool, _ string) bool { return !insecure }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.info.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || cfg.BearerToken != tt.wantToken || !tt.check(cfg.Insecure, cfg.ServerName) {
				t.Errorf("RESTConfig = host %q token %q insecure %v server name %q", cfg.Host, cfg.BearerToken, cfg.Insecure, cfg.ServerName)
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

func TestHubIndex(t *testing.T) {
	hub := &Info{Server: "https://hub2", CAData: []byte("CA2"), CertData: []byte("cert")}
	primary := &Info{Server: "https://hub1", CAData: []byte("CA1"), Token: "t1"}
	standby := &Info{Server: "https://hub2", CAData: []byte("CA2"), Token: "t2"}
	tests := []struct {
		name  string
		hub   *Info
		cands []*Info
		want  int
	}{
		{"the standby", hub, []*Info{primary, standby}, 1},
		{"the first of two for the same hub", hub, []*Info{standby, standby}, 0},
		{"an unreadable candidate", hub, []*Info{nil, standby}, 1},
		{"none", hub, []*Info{primary}, -1},
		{"no hub kubeconfig", nil, []*Info{primary, standby}, -1},
	}
	for _, tt := range tests {
		if got := HubIndex(tt.hub, tt.cands); got != tt.want {
			t.Errorf("%s: HubIndex = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// kubeconfigYAML is a kubeconfig whose current context c joins cluster h
// (the YAML mapping cluster) to user u (the mapping user), plus a context
// other whose files exist nowhere.
func kubeconfigYAML(cluster, user string) string {
	return `apiVersion: v1
kind: Config
current-context: c
contexts:
- {name: c, context: {cluster: h, user: u}}
- {name: other, context: {cluster: o, user: o}}
clusters:
- {name: h, cluster: ` + cluster + `}
- {name: o, cluster: {server: "https://o", certificate-authority: /nowhere/ca.crt}}
users:
- {name: u, user: ` + user + `}
- {name: o, user: {client-certificate: /nowhere/o.crt, client-key: /nowhere/o.key}}
`
}

// TestHubHash pins the hash to the value OCM's agents compute for the same
// URL (fmt.Sprintf("%x", sha256.Sum256([]byte(host)))), which namespaces
// and AppliedManifestWorks on managed clusters carry.
func TestHubHash(t *testing.T) {
	const want = "6c5003f4dd1691967bd3047645092380ef15affc718a40bf6cc43496f96e552a"
	if got := HubHash("https://127.0.0.1:6443"); got != want {
		t.Errorf("HubHash = %s, want %s", got, want)
	}
}

func TestSameHubAcrossCARotation(t *testing.T) {
	ca := func(host string) []byte {
		c, _, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old, next := ca("old"), ca("next")
	both := append(append([]byte{}, old...), next...)
	joined := &Info{Server: "https://hub", CAData: old}
	if !SameHub(joined, &Info{Server: "https://hub", CAData: both}) {
		t.Error("a bundle that adds the new CA is not the same hub")
	}
	if !SameHub(&Info{Server: "https://hub", CAData: both}, &Info{Server: "https://hub", CAData: next}) {
		t.Error("the new CA alone, after both, is not the same hub")
	}
	if SameHub(joined, &Info{Server: "https://hub", CAData: next}) {
		t.Error("a hub of another CA at the same address is the same hub")
	}
}

func TestWithCAData(t *testing.T) {
	ca := func(host string) []byte {
		c, _, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old, next := ca("old"), ca("next")
	boot, err := ForTokenVia("https://hub:6443", old, "http://proxy:3128", "tok")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{KubeconfigKey: boot, "other": []byte("kept")}
	got, err := WithCAData(data, next)
	if err != nil {
		t.Fatal(err)
	}
	info, err := FromSecret(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(info.CAData) != string(next) || info.Server != "https://hub:6443" || info.ProxyURL != "http://proxy:3128" || info.Token != "tok" || string(got["other"]) != "kept" {
		t.Errorf("rewritten kubeconfig: %+v, other %q", info, got["other"])
	}
	if string(data[KubeconfigKey]) != string(boot) {
		t.Error("the input was changed")
	}
	// A CA named by file, a key of the Secret, is rewritten in that key.
	byFile := []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: https://hub:6443\n    certificate-authority: /var/run/secrets/ca.crt\ncontexts:\n- name: c\n  context: {cluster: hub, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: tok}\n")
	got, err = WithCAData(map[string][]byte{KubeconfigKey: byFile, "ca.crt": old}, next)
	if err != nil {
		t.Fatal(err)
	}
	if string(got["ca.crt"]) != string(next) || string(got[KubeconfigKey]) != string(byFile) {
		t.Errorf("CA file key %q, kubeconfig changed %t", got["ca.crt"], string(got[KubeconfigKey]) != string(byFile))
	}
	if _, err := WithCAData(map[string][]byte{}, next); err == nil {
		t.Error("no kubeconfig: no error")
	}
	if _, err := WithCAData(data, nil); err == nil {
		t.Error("empty CA: no error")
	}
}
