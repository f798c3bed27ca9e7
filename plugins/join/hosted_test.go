package join

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// writeKubeconfig writes a one-context kubeconfig to dir/name; change edits
// it first.
func writeKubeconfig(t *testing.T, dir, name string, change func(*clientcmdapi.Config)) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["managed"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthority: "ca.crt"}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t0ken"}
	kc.Contexts["managed"] = &clientcmdapi.Context{Cluster: "managed", AuthInfo: "admin"}
	kc.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://other:6443"}
	kc.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "admin"}
	kc.CurrentContext = "managed"
	if change != nil {
		change(kc)
	}
	path := filepath.Join(dir, name)
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadManagedKubeconfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("CA DATA"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		file            string
		wantErrContains string
	}{
		{name: "file CA is embedded, other contexts dropped", file: writeKubeconfig(t, dir, "ok", nil)},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErrContains: "cannot load --managed-cluster-kubeconfig"},
		{name: "no current context", file: writeKubeconfig(t, dir, "nocontext", func(kc *clientcmdapi.Config) { kc.CurrentContext = "" }),
			wantErrContains: "has no current context"},
		{name: "unreadable CA file", file: writeKubeconfig(t, dir, "badca", func(kc *clientcmdapi.Config) {
			kc.Clusters["managed"].CertificateAuthority = "missing.crt"
		}), wantErrContains: "names a file that cannot be read"},
		{name: "exec plugin", file: writeKubeconfig(t, dir, "exec", func(kc *clientcmdapi.Config) {
			kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}}
		}), wantErrContains: "exec or auth-provider plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, cfg, err := loadManagedKubeconfig(tt.file)
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				assert.NotContains(t, err.Error(), "\n", "the error is one line")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != "CA DATA" || cfg.CAFile != "" {
				t.Errorf("config host %q CA %q file %q, want the managed cluster with the CA embedded", cfg.Host, cfg.CAData, cfg.CAFile)
			}
			kc, err := clientcmd.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(kc.Contexts) != 1 || kc.Contexts["managed"] == nil {
				t.Errorf("flattened kubeconfig has contexts %v, want only managed", kc.Contexts)
			}
		})
	}
}

func TestHostedObjects(t *testing.T) {
	o := validOptions()
	o.Mode, o.ManagedClusterKubeconfig, o.ClusterName = ModeHosted, "managed.kubeconfig", "cluster2"
	o.managed = &managedCheck{kubeconfig: []byte("managed kubeconfig")}
	tests := []struct {
		name      string
		singleton bool
		wantMode  string
	}{
		{name: "hosted", wantMode: "Hosted"},
		{name: "singleton hosted", singleton: true, wantMode: "SingletonHosted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o.Singleton = tt.singleton
			objs, managed, err := o.objects("https://hub.example.com:6443", []byte("CA"))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range managed {
				if m.GetKind() != "CustomResourceDefinition" || m.GetName() == config.KlusterletsCRDName {
					t.Errorf("managed cluster gets %s %s; it should get only the ClusterClaim and AppliedManifestWork CRDs", m.GetKind(), m.GetName())
				}
			}
			if len(managed) != 2 {
				t.Errorf("managed cluster gets %d objects, want 2 CRDs", len(managed))
			}
			var k *unstructured.Unstructured
			for _, obj := range objs {
				if obj.GetKind() == "Klusterlet" {
					k = obj
				}
				if ns := obj.GetNamespace(); ns != "" && ns != "klusterlet-cluster2" && ns != operatorv1.OperatorNamespace {
					t.Errorf("%s %s is in namespace %s, want klusterlet-cluster2 (the agent's) or %s (the operator's)", obj.GetKind(), obj.GetName(), ns, operatorv1.OperatorNamespace)
				}
			}
			if k == nil || k.GetName() != "klusterlet-cluster2" {
				t.Fatalf("no Klusterlet klusterlet-cluster2 for the hosting cluster")
			}
			if mode, _, _ := unstructured.NestedString(k.Object, "spec", "deployOption", "mode"); mode != tt.wantMode {
				t.Errorf("Klusterlet mode %q, want %q", mode, tt.wantMode)
			}
		})
	}
	t.Run("a dry run's manifests say which belong on the managed cluster", func(t *testing.T) {
		streams, _, _, errOut := genericiooptions.NewTestIOStreams()
		o.IOStreams = streams
		o.PrintFlags.OutputFormat = ptr.To("yaml")
		_, managed, err := o.objects("https://hub.example.com:6443", []byte("CA"))
		if err != nil {
			t.Fatal(err)
		}
		o.noteManagedObjects(managed)
		if got := errOut.String(); !strings.Contains(got, config.ClusterClaimsCRDName) || strings.Contains(got, config.KlusterletsCRDName) {
			t.Errorf("note = %q, want the ClusterClaim and AppliedManifestWork CRDs only", got)
		}
	})
	if o.agentNamespace() != "klusterlet-cluster2" || o.agentDeployment() != "klusterlet-cluster2-agent" || o.klusterletName() != "klusterlet-cluster2" {
		t.Errorf("hosted names: namespace %s, deployment %s, klusterlet %s", o.agentNamespace(), o.agentDeployment(), o.klusterletName())
	}
}
