package importer

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig returns a kubeconfig with one context, "c", whose cluster and
// user edit may change.
func kubeconfig(t *testing.T, edit func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", CertificateAuthorityData: []byte("CA")}
	user := &clientcmdapi.AuthInfo{Token: "secret-token"}
	if edit != nil {
		edit(cluster, user)
	}
	kc.Clusters["c"], kc.AuthInfos["u"] = cluster, user
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadCredential(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    map[string][]byte
		wantErr string
		want    *rest.Config
	}{
		{name: "kubeconfig", data: map[string][]byte{KubeconfigKey: kubeconfig(t, nil)},
			want: &rest.Config{Host: "https://10.0.0.1:6443", BearerToken: "secret-token", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA")}}},
		{name: "client certificate", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.ClientCertificateData, u.ClientKeyData = "", []byte("CERT"), []byte("KEY")
		})}, want: &rest.Config{Host: "https://10.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA"), CertData: []byte("CERT"), KeyData: []byte("KEY")}}},
		{name: "server and token", data: map[string][]byte{ServerKey: []byte("https://c.example:6443"), TokenKey: []byte("secret-token\n"), CAKey: []byte("CA")},
			want: &rest.Config{Host: "https://c.example:6443", BearerToken: "secret-token", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA")}}},
		{name: "both", data: map[string][]byte{KubeconfigKey: kubeconfig(t, nil), TokenKey: []byte("t")}, wantErr: "both a kubeconfig"},
		{name: "neither", data: map[string][]byte{"other": []byte("x")}, wantErr: "neither a kubeconfig"},
		{name: "server alone", data: map[string][]byte{ServerKey: []byte("https://c:6443")}, wantErr: "holds a server without a token"},
		{name: "token alone", data: map[string][]byte{TokenKey: []byte("t")}, wantErr: "holds a token without a server"},
		{name: "http server", data: map[string][]byte{ServerKey: []byte("http://c:6443"), TokenKey: []byte("t")}, wantErr: "is not https"},
		{name: "not a URL", data: map[string][]byte{ServerKey: []byte("c:6443"), TokenKey: []byte("t")}, wantErr: "not a URL"},
		{name: "not a kubeconfig", data: map[string][]byte{KubeconfigKey: []byte("{")}, wantErr: "does not hold a kubeconfig"},
		{name: "exec", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}
		})}, wantErr: "uses exec,"},
		{name: "files", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(c *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			c.CertificateAuthority, u.TokenFile = "/etc/ca.crt", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		})}, wantErr: "uses certificate-authority (a file), tokenFile,"},
		{name: "insecure and proxy", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
			c.InsecureSkipTLSVerify, c.CertificateAuthorityData, c.ProxyURL = true, nil, "http://proxy:3128"
		})}, wantErr: "uses insecure-skip-tls-verify, proxy-url,"},
		{name: "impersonation", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.Impersonate = "admin" })}, wantErr: "as (impersonation)"},
		{name: "no credential", data: map[string][]byte{KubeconfigKey: kubeconfig(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.Token = "" })}, wantErr: "no token and no client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCredential(tc.data)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.NotContains(t, err.Error(), "secret-token", "the error quotes the token")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != tc.want.Host || got.BearerToken != tc.want.BearerToken || string(got.CAData) != string(tc.want.CAData) ||
				string(got.CertData) != string(tc.want.CertData) || string(got.KeyData) != string(tc.want.KeyData) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFromKubeconfigContext(t *testing.T) {
	kc, err := clientcmd.Load(kubeconfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromKubeconfig(kc, "other")
	assert.ErrorContains(t, err, `no context "other" (it has "c")`, "an unknown context")
	cfg, err := FromKubeconfig(kc, "c")
	if err != nil {
		t.Fatal(err)
	}
	// What import writes reads back the same.
	out, err := Kubeconfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ReadCredential(map[string][]byte{KubeconfigKey: out})
	if err != nil {
		t.Fatal(err)
	}
	if again.Host != cfg.Host || again.BearerToken != cfg.BearerToken || string(again.CAData) != string(cfg.CAData) {
		t.Errorf("read back %+v, want %+v", again, cfg)
	}
}

func TestGuardCheck(t *testing.T) {
	for _, tc := range []struct {
		ip            string
		allowLoopback bool
		wantErr       string
	}{
		// Clusters: private, public and IPv6 addresses, also through NAT64.
		{ip: "10.0.0.1"},
		{ip: "172.31.1.1"},
		{ip: "192.168.1.10"},
		{ip: "100.64.0.1"}, // carrier-grade NAT, beside Alibaba's metadata address
		{ip: "100.100.100.201"},
		{ip: "168.63.129.17"},
		{ip: "203.0.113.7"},
		{ip: "2001:db8::1"},
		{ip: "fd00:ec2::253"},
		{ip: "64:ff9b::cb00:7107"}, // 203.0.113.7 through NAT64
		{ip: "64:ff9b:1::cb00:7107"},

		// The importer itself.
		{ip: "127.0.0.1", wantErr: "loopback"},
		{ip: "127.1.2.3", wantErr: "loopback"},
		{ip: "::1", wantErr: "loopback"},
		{ip: "::ffff:127.0.0.1", wantErr: "loopback"},
		{ip: "64:ff9b::7f00:1", wantErr: "127.0.0.1 through NAT64): a loopback"},
		{ip: "127.0.0.1", allowLoopback: true},
		{ip: "::1", allowLoopback: true},
		{ip: "64:ff9b::7f00:1", allowLoopback: true},

		// Metadata services, in every form.
		{ip: "169.254.169.254", allowLoopback: true, wantErr: "link-local"},
		{ip: "169.254.0.1", wantErr: "link-local"},
		{ip: "::ffff:169.254.169.254", wantErr: "link-local"},
		{ip: "64:ff9b::a9fe:a9fe", wantErr: "169.254.169.254 through NAT64): a link-local"},
		{ip: "64:ff9b::169.254.0.1", wantErr: "through NAT64): a link-local"},
		{ip: "64:ff9b:1::a9fe:a9fe", wantErr: "169.254.169.254 through NAT64): a link-local"},
		{ip: "fe80::1", wantErr: "link-local"},
		{ip: "fe80::a9fe:a9fe", wantErr: "link-local"},
		{ip: "fd00:ec2::254", wantErr: "AWS's instance metadata"},
		{ip: "100.100.100.200", wantErr: "Alibaba Cloud's instance metadata"},
		{ip: "::ffff:100.100.100.200", wantErr: "Alibaba Cloud's instance metadata"},
		{ip: "64:ff9b::6464:64c8", wantErr: "100.100.100.200 through NAT64): it is Alibaba"},
		{ip: "168.63.129.16", wantErr: "Azure's WireServer"},
		{ip: "64:ff9b::a83f:8110", wantErr: "168.63.129.16 through NAT64): it is Azure's WireServer"},

		// No single host.
		{ip: "0.0.0.0", wantErr: "not a unicast"},
		{ip: "0.1.2.3", wantErr: "not a unicast"},
		{ip: "::", wantErr: "not a unicast"},
		{ip: "64:ff9b::", wantErr: "0.0.0.0 through NAT64): not a unicast"},
		{ip: "239.1.1.1", wantErr: "not a unicast"},
		{ip: "224.0.0.1", wantErr: "not a unicast"},
		{ip: "255.255.255.255", wantErr: "not a unicast"},
		{ip: "ff02::1", wantErr: "not a unicast"},
		{ip: "ff01::1", wantErr: "not a unicast"},
		{ip: "64:ff9b::e000:1", wantErr: "224.0.0.1 through NAT64): not a unicast"},
	} {
		err := Guard{AllowLoopback: tc.allowLoopback}.Check(net.ParseIP(tc.ip))
		if tc.wantErr == "" {
			assert.NoError(t, err, "%s (loopback allowed: %v)", tc.ip, tc.allowLoopback)
		} else {
			assert.ErrorContains(t, err, tc.wantErr, "%s (loopback allowed: %v)", tc.ip, tc.allowLoopback)
		}
	}
}

// TestGuardRules checks each range of the table at its edges: its first
// and last addresses are refused for its reason, the addresses just past
// them are not, unless another range holds them.
func TestGuardRules(t *testing.T) {
	for _, r := range refused {
		first, last := r.prefix.Masked().Addr(), lastOf(r.prefix)
		for _, in := range []netip.Addr{first, last} {
			err := (Guard{}).Check(net.IP(in.AsSlice()))
			assert.ErrorContains(t, err, r.why, "%s in %s", in, r.prefix)
		}
		for _, out := range []netip.Addr{first.Prev(), last.Next()} {
			if !out.IsValid() || out.Is4() != first.Is4() || refusedElsewhere(out, r.prefix) {
				continue
			}
			if err := (Guard{}).Check(net.IP(out.AsSlice())); err != nil {
				t.Errorf("%s, just outside %s: %v", out, r.prefix, err)
			}
		}
	}
}

// lastOf returns the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// refusedElsewhere reports whether a range of the table other than p, or
// the NAT64 prefix, holds a.
func refusedElsewhere(a netip.Addr, p netip.Prefix) bool {
	for _, o := range refused {
		if o.prefix != p && o.prefix.Contains(a) {
			return true
		}
	}
	for _, p := range nat64 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// TestGuardedDial shows that a guarded configuration refuses to connect to
// a loopback server, also through a host name, and reaches it when allowed.
func TestGuardedDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, host := range []string{"127.0.0.1", "localhost"} {
		get := func(g Guard) error {
			cfg := g.Guarded(&rest.Config{Host: "http://" + host + ":" + port}, 5*time.Second)
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				return err
			}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.Host+"/", nil)
			resp, err := hc.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			return err
		}
		assert.ErrorContains(t, get(Guard{}), "refusing to dial", host)
		if err := get(Guard{AllowLoopback: true}); err != nil {
			t.Errorf("%s with loopback allowed: %v", host, err)
		}
	}
}

func TestDataHashAndRetries(t *testing.T) {
	a := DataHash(map[string][]byte{"a": []byte("bc")})
	if a != DataHash(map[string][]byte{"a": []byte("bc")}) {
		t.Error("the hash of the same data differs")
	}
	if a == DataHash(map[string][]byte{"ab": []byte("c")}) {
		t.Error("a key and value split differently hash the same")
	}
	if n, err := Retries(nil); n != -1 || err != nil {
		t.Errorf("no key: %d, %v", n, err)
	}
	if n, err := Retries(map[string][]byte{RetryKey: []byte(" 2 ")}); n != 2 || err != nil {
		t.Errorf("2: %d, %v", n, err)
	}
	if _, err := Retries(map[string][]byte{RetryKey: []byte("-1")}); err == nil {
		t.Error("a negative count was accepted")
	}
}

func TestNote(t *testing.T) {
	for _, msg := range []string{"failed" + Note("12", 3), "done" + Note("12", 0)} {
		if !ForVersion(msg, "12") {
			t.Errorf("%q is not read as about version 12", msg)
		}
		if ForVersion(msg, "1") {
			t.Errorf("%q is read as about version 1", msg)
		}
	}
}
