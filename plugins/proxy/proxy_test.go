package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

const proxyPath = "/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/cluster1/proxy"

// hubConfig builds a kubeconfig with context hub, whose cluster and user
// are cluster and user.
func hubConfig(cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub-cluster"] = cluster
	cfg.AuthInfos["hub-user"] = user
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub-cluster", AuthInfo: "hub-user", Namespace: "hub-ns"}
	cfg.CurrentContext = "hub"
	return cfg
}

// writeFile writes data to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKubeconfig(t *testing.T) {
	dir := t.TempDir()
	caFile, certFile, keyFile := writeFile(t, dir, "ca.crt", "CA"), writeFile(t, dir, "user.crt", "CERT"), writeFile(t, dir, "user.key", "KEY")
	exec := &clientcmdapi.ExecConfig{
		APIVersion: hubtunnel.ExecAPIVersion, Command: "/usr/local/bin/get-token", Args: []string{"--hub", "prod"},
		Env: []clientcmdapi.ExecEnvVar{{Name: "A", Value: "b"}}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode, ProvideClusterInfo: true,
	}
	tests := []struct {
		name      string
		hub       *clientcmdapi.Config
		namespace string
		// wantCluster and wantUser are the expected cluster and user.
		wantCluster *clientcmdapi.Cluster
		wantUser    *clientcmdapi.AuthInfo
		wantErr     string
	}{
		{
			name: "certificate files are embedded",
			hub: hubConfig(&clientcmdapi.Cluster{Server: "https://hub.example.com:6443", CertificateAuthority: caFile},
				&clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}),
			wantCluster: &clientcmdapi.Cluster{Server: "https://hub.example.com:6443" + proxyPath, CertificateAuthorityData: []byte("CA")},
			wantUser:    &clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")},
		},
		{
			name: "certificate data, TLS server name, proxy URL",
			hub: hubConfig(&clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", CertificateAuthorityData: []byte("CA"), TLSServerName: "hub.example.com", ProxyURL: "socks5://localhost:1080"},
				&clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")}),
			wantCluster: &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443" + proxyPath, CertificateAuthorityData: []byte("CA"), TLSServerName: "hub.example.com", ProxyURL: "socks5://localhost:1080"},
			wantUser:    &clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")},
		},
		{
			name:        "a token and a token file are kept, insecure too",
			hub:         hubConfig(&clientcmdapi.Cluster{Server: "https://hub:6443", InsecureSkipTLSVerify: true}, &clientcmdapi.AuthInfo{Token: "t0k3n", TokenFile: "/var/run/token"}),
			wantCluster: &clientcmdapi.Cluster{Server: "https://hub:6443" + proxyPath, InsecureSkipTLSVerify: true},
			wantUser:    &clientcmdapi.AuthInfo{Token: "t0k3n", TokenFile: "/var/run/token"},
		},
		{
			name:        "an exec plugin is kept as it is, impersonation too",
			hub:         hubConfig(&clientcmdapi.Cluster{Server: "https://hub:6443"}, &clientcmdapi.AuthInfo{Exec: exec, Impersonate: "alice"}),
			wantCluster: &clientcmdapi.Cluster{Server: "https://hub:6443" + proxyPath},
			wantUser:    &clientcmdapi.AuthInfo{Exec: exec, Impersonate: "alice"},
		},
		{
			name:        "the hub URL's path is kept, and the namespace set",
			hub:         hubConfig(&clientcmdapi.Cluster{Server: "https://lb.example.com/k8s/hub/"}, &clientcmdapi.AuthInfo{Token: "t"}),
			namespace:   "team-a",
			wantCluster: &clientcmdapi.Cluster{Server: "https://lb.example.com/k8s/hub" + proxyPath},
			wantUser:    &clientcmdapi.AuthInfo{Token: "t"},
		},
		{
			name:    "a CA file that cannot be read",
			hub:     hubConfig(&clientcmdapi.Cluster{Server: "https://hub:6443", CertificateAuthority: filepath.Join(dir, "missing")}, &clientcmdapi.AuthInfo{}),
			wantErr: "read the hub kubeconfig's certificate-authority",
		},
		{
			name:    "a server that is no URL",
			hub:     hubConfig(&clientcmdapi.Cluster{Server: "hub:6443"}, &clientcmdapi.AuthInfo{}),
			wantErr: `is not a URL`,
		},
		{
			name:    "no current context",
			hub:     clientcmdapi.NewConfig(),
			wantErr: "no current context",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Kubeconfig(tt.hub, "cluster1", tt.namespace)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Clusters) != 1 || len(got.AuthInfos) != 1 || len(got.Contexts) != 1 || got.CurrentContext != "cluster1-via-hub" {
				t.Fatalf("want one cluster, user and context cluster1-via-hub, current: %+v", got)
			}
			wantContext := &clientcmdapi.Context{Cluster: "cluster1-via-hub", AuthInfo: "cluster1-via-hub", Namespace: tt.namespace}
			// Compare through the file's encoding, as kubectl reads it.
			data, err := clientcmd.Write(*got)
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := clientcmd.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := clientcmd.Validate(*loaded); err != nil {
				t.Errorf("the kubeconfig is not valid: %v\n%s", err, data)
			}
			want := clientcmdapi.NewConfig()
			want.Clusters["cluster1-via-hub"], want.AuthInfos["cluster1-via-hub"], want.Contexts["cluster1-via-hub"] = tt.wantCluster, tt.wantUser, wantContext
			want.CurrentContext = "cluster1-via-hub"
			wantData, err := clientcmd.Write(*want)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != string(wantData) {
				t.Errorf("kubeconfig:\n%s\nwant:\n%s", data, wantData)
			}
		})
	}
}

// writeKubeconfig writes cfg to a file in dir and returns flags that load it.
func writeKubeconfig(t *testing.T, cfg *clientcmdapi.Config) *genericclioptions.ConfigFlags {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = ptr.To(path)
	return flags
}

func TestHubConfigAppliesTheKubectlFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "user.crt", "CERT")
	writeFile(t, dir, "user.key", "KEY")
	cfg := hubConfig(&clientcmdapi.Cluster{Server: "https://hub:6443"}, &clientcmdapi.AuthInfo{ClientCertificate: "user.crt", ClientKey: "user.key"})
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://other:6443"}
	cfg.AuthInfos["token-user"] = &clientcmdapi.AuthInfo{Token: "abc"}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "token-user"}
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		flags       func(f *genericclioptions.ConfigFlags)
		wantServer  string
		wantUser    string
		wantContext string
	}{
		{"the current context; relative files resolved next to the kubeconfig", func(*genericclioptions.ConfigFlags) {}, "https://hub:6443" + proxyPath, "client-certificate-data: Q0VSVA==", ""},
		{"--context", func(f *genericclioptions.ConfigFlags) { f.Context = ptr.To("other") }, "https://other:6443" + proxyPath, "token: abc", ""},
		{"--user and --server", func(f *genericclioptions.ConfigFlags) {
			f.AuthInfoName, f.APIServer = ptr.To("token-user"), ptr.To("https://lb:443/hub")
		}, "https://lb:443/hub" + proxyPath, "token: abc", ""},
		{"--token", func(f *genericclioptions.ConfigFlags) { f.Context, f.BearerToken = ptr.To("other"), ptr.To("xyz") }, "https://other:6443" + proxyPath, "token: xyz", ""},
		{"--as", func(f *genericclioptions.ConfigFlags) { f.Impersonate = ptr.To("bob") }, "https://hub:6443" + proxyPath, "as: bob", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags := genericclioptions.NewConfigFlags(false)
			flags.KubeConfig = ptr.To(path)
			tt.flags(flags)
			hub, err := HubConfig(flags)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Kubeconfig(hub, "cluster1", "")
			if err != nil {
				t.Fatal(err)
			}
			if s := got.Clusters["cluster1-via-hub"].Server; s != tt.wantServer {
				t.Errorf("server = %q, want %q", s, tt.wantServer)
			}
			data, err := clientcmd.Write(*got)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tt.wantUser) {
				t.Errorf("kubeconfig lacks %q:\n%s", tt.wantUser, data)
			}
		})
	}

	empty := writeFile(t, dir, "empty", "")
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = ptr.To(empty)
	_, err := HubConfig(flags)
	assert.ErrorContains(t, err, "--kubeconfig", "an empty kubeconfig")
}

func TestGrant(t *testing.T) {
	tests := []struct {
		user string
		want string
	}{
		{"alice", "kubectl create clusterrolebinding ocm-proxy-cluster1-alice --clusterrole=ocm-proxy-cluster1 --user=alice"},
		{"Alice Smith", "kubectl create clusterrolebinding ocm-proxy-cluster1-alice-smith --clusterrole=ocm-proxy-cluster1 --user='Alice Smith'"},
		{"system:serviceaccount:apps:robot", "kubectl create clusterrolebinding ocm-proxy-cluster1-apps-robot --clusterrole=ocm-proxy-cluster1 --serviceaccount=apps:robot"},
		{"", "kubectl create clusterrolebinding ocm-proxy-cluster1-HUB_USER --clusterrole=ocm-proxy-cluster1 --user=HUB_USER"},
	}
	for _, tt := range tests {
		if got := GrantBinding("cluster1", tt.user); got != tt.want {
			t.Errorf("GrantBinding(%q) = %s, want %s", tt.user, got, tt.want)
		}
		script := GrantScript("cluster1", tt.user)
		if !strings.HasSuffix(script, "\nEOF\n"+tt.want) {
			t.Errorf("GrantScript(%q) does not end with the binding:\n%s", tt.user, script)
		}
	}

	// The ClusterRole of the script's here-document.
	script := GrantScript("cluster1", "alice")
	doc, ok := strings.CutPrefix(script, "kubectl apply -f - <<'EOF'\n")
	if !ok {
		t.Fatalf("the script does not start with kubectl apply of a here-document:\n%s", script)
	}
	doc, _, _ = strings.Cut(doc, "\nEOF\n")
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict([]byte(doc), role); err != nil {
		t.Fatalf("the here-document is no ClusterRole: %v\n%s", err, doc)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{hubtunnel.Group}, Resources: []string{"managedclusters/proxy"}, ResourceNames: []string{"cluster1"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}}}
	if role.Kind != "ClusterRole" || role.APIVersion != "rbac.authorization.k8s.io/v1" || role.Name != "ocm-proxy-cluster1" || !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("ClusterRole %+v, want rules %+v", role, want)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if !slices.Contains(role.Rules[0].Verbs, hubtunnel.ProxyVerb(method)) {
			t.Errorf("the ClusterRole lacks the verb of %s", method)
		}
	}
}

// fakeHub answers the proxy's /version with status and body, and
// SelfSubjectReviews as user bob.
func fakeHub(t *testing.T, status int, body any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case proxyPath + "/version":
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(body)
		case "/apis/authentication.k8s.io/v1/selfsubjectreviews":
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","status":{"userInfo":{"username":"bob"}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func failure(code int32, reason metav1.StatusReason, msg string) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   any
		want   []string
	}{
		{"answers", http.StatusOK, map[string]string{"gitVersion": "v1.37.1"}, []string{"cluster1 answers through the hub (Kubernetes v1.37.1)"}},
		{"no permission at the hub", http.StatusForbidden,
			failure(403, metav1.StatusReasonForbidden, `managedclusters.proxy.kubectl-ocm.io "cluster1" is forbidden: User "bob" cannot get resource "managedclusters/proxy" in API group "proxy.kubectl-ocm.io" at the cluster scope`),
			[]string{"Warning: cluster1 does not answer through the hub: you (User \"bob\") may not use managedclusters/proxy of cluster1 on the hub. A hub admin grants it with:\n" +
				GrantScript("cluster1", "bob") + "\nThe hub said: managedclusters.proxy.kubectl-ocm.io \"cluster1\" is forbidden"}},
		{"no tunnel", http.StatusServiceUnavailable,
			failure(503, metav1.StatusReasonServiceUnavailable, "cluster cluster1 has no tunnel to the hub: its agent is not connected"),
			[]string{"Warning: cluster1 does not answer through the hub: its agent has no tunnel attached to the hub.", "HubTunnel feature gate off", "kubectl ocm get klusterlet"}},
		{"the hub's API unavailable", http.StatusServiceUnavailable,
			failure(503, metav1.StatusReasonServiceUnavailable, "the server is currently unable to handle the request"),
			[]string{"the hub's API proxy.kubectl-ocm.io/v1alpha1 is not available", "kubectl get apiservice v1alpha1.proxy.kubectl-ocm.io"}},
		{"an older hub", http.StatusNotFound, failure(404, metav1.StatusReasonNotFound, "the server could not find the requested resource"),
			[]string{"the hub does not serve proxy.kubectl-ocm.io/v1alpha1", "kubectl ocm upgrade hub"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeHub(t, tt.status, tt.body)
			hub := hubConfig(&clientcmdapi.Cluster{Server: srv.URL}, &clientcmdapi.AuthInfo{Token: "t"})
			o := NewKubeconfigOptions(writeKubeconfig(t, hub), genericiooptions.NewTestIOStreamsDiscard())
			o.Cluster = "cluster1"
			cfg, err := Kubeconfig(hub, "cluster1", "")
			if err != nil {
				t.Fatal(err)
			}
			got := o.probe(context.Background(), cfg)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("probe lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cluster, namespace, wantErr string
	}{
		{"cluster1", "", ""},
		{"cluster1", "team-a", ""},
		{"", "", "kubectl ocm get clusters"},
		{"Cluster_1", "", "is not a managed cluster name"},
		{"cluster1", "Team A", "is not a namespace name"},
	}
	for _, tt := range tests {
		o := NewKubeconfigOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
		o.Cluster, o.Namespace = tt.cluster, tt.namespace
		err := o.Validate()
		if tt.wantErr == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, tt.wantErr)
		}
	}
}

func TestCompleteTakesTheNamespaceOnlyFromTheFlag(t *testing.T) {
	flags := writeKubeconfig(t, hubConfig(&clientcmdapi.Cluster{Server: "https://hub:6443"}, &clientcmdapi.AuthInfo{Token: "t"}))
	o := NewKubeconfigOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	if err := o.Complete(nil, []string{"cluster1"}); err != nil {
		t.Fatal(err)
	}
	if o.Cluster != "cluster1" || o.Namespace != "" {
		t.Errorf("without -n: cluster %q, namespace %q (the hub context's namespace is the hub's)", o.Cluster, o.Namespace)
	}
	flags.Namespace = ptr.To("team-a")
	o = NewKubeconfigOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	if err := o.Complete(nil, []string{"cluster1"}); err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "team-a" {
		t.Errorf("with -n team-a: namespace %q", o.Namespace)
	}
}
