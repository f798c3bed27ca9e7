package kubeconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagedKubeconfigKey is the key of the managed cluster's kubeconfig in the
// Secret (external-managed-kubeconfig) of a hosted agent.
const ManagedKubeconfigKey = "kubeconfig"

// ReadManagedCluster reads the Secret ref on the hosting cluster and returns
// the client configuration of the managed cluster's kubeconfig in it. Hosted
// agents (registration and work) reach their managed cluster this way.
func ReadManagedCluster(ctx context.Context, r client.Reader, ref types.NamespacedName) (*rest.Config, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, ref, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s does not exist on the hosting cluster: run `kubectl ocm join --mode hosted --managed-cluster-kubeconfig FILE` again", ref)
		}
		return nil, fmt.Errorf("read Secret %s with the managed cluster's kubeconfig: %w", ref, err)
	}
	return ManagedClusterConfig(s.Data, ref.String())
}

// ManagedClusterConfig returns the client configuration of the kubeconfig
// under ManagedKubeconfigKey in data, the contents of the Secret named ref
// (for messages). A kubeconfig that names files is refused: they would not
// exist where the agent runs.
func ManagedClusterConfig(data map[string][]byte, ref string) (*rest.Config, error) {
	raw := data[ManagedKubeconfigKey]
	if len(raw) == 0 {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s has no key %s", ref, ManagedKubeconfigKey)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: key %s is not a usable kubeconfig: %w", ref, ManagedKubeconfigKey, err)
	}
	if files := referencedFiles(kc); len(files) > 0 {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s names files %v; embed their contents (kubectl config view --flatten --minify)", ref, files)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: key %s is not a usable kubeconfig: %w", ref, ManagedKubeconfigKey, err)
	}
	return cfg, nil
}

// referencedFiles returns the files that the current context of kc names
// for its CA, client certificate, key or token.
func referencedFiles(kc *clientcmdapi.Config) []string {
	var files []string
	add := func(f string) {
		if f != "" {
			files = append(files, f)
		}
	}
	if ctx := kc.Contexts[kc.CurrentContext]; ctx != nil {
		if c := kc.Clusters[ctx.Cluster]; c != nil {
			add(c.CertificateAuthority)
		}
		if u := kc.AuthInfos[ctx.AuthInfo]; u != nil {
			add(u.ClientCertificate)
			add(u.ClientKey)
			add(u.TokenFile)
		}
	}
	return files
}
