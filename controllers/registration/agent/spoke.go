package agent

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// managedKubeconfigReadTimeout bounds the read of the managed cluster's
// kubeconfig Secret at start-up.
const managedKubeconfigReadTimeout = 30 * time.Second

// spokeClients are the agent's view of the managed cluster ("spoke"), as
// opposed to the management cluster it runs on. In Default mode both are the
// manager's cluster; in Hosted mode the spoke is a separate cluster.Cluster
// built from the kubeconfig in Options.ManagedKubeconfigSecret.
type spokeClients struct {
	// cluster provides the cached client and the cache whose Node and
	// ClusterClaim events trigger status syncs.
	cluster cluster.Cluster
	// kube probes /livez and reads the server version.
	kube kubernetes.Interface
	// ca is the CA bundle of the managed cluster's API server.
	ca []byte
}

// newSpoke returns the managed cluster's clients. In Hosted mode it reads the
// kubeconfig Secret from the management cluster and adds the new cluster (its
// cache) to mgr, which starts it.
func newSpoke(mgr manager.Manager, opts Options) (*spokeClients, error) {
	if opts.ManagedKubeconfigSecret == "" {
		return spokeFor(mgr, mgr.GetConfig())
	}
	ctx, cancel := context.WithTimeout(context.Background(), managedKubeconfigReadTimeout)
	defer cancel()
	ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
	s := &corev1.Secret{}
	if err := mgr.GetAPIReader().Get(ctx, ref, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s does not exist on the hosting cluster: run `kubectl ocm join --mode hosted --managed-cluster-kubeconfig FILE` again", ref)
		}
		return nil, fmt.Errorf("read Secret %s with the managed cluster's kubeconfig: %w", ref, err)
	}
	cfg, err := spokeConfig(s.Data, ref.String())
	if err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg, func(o *cluster.Options) { o.Scheme = mgr.GetScheme() })
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's client from Secret %s: %w", ref, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the managed cluster's cache: %w", err)
	}
	return spokeFor(c, cfg)
}

// spokeFor builds the clients of the managed cluster c, reached with cfg.
func spokeFor(c cluster.Cluster, cfg *rest.Config) (*spokeClients, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster clientset: %w", err)
	}
	ca, err := caBundle(cfg)
	if err != nil {
		return nil, err
	}
	return &spokeClients{cluster: c, kube: kube, ca: ca}, nil
}

// spokeConfig parses the managed cluster's kubeconfig from the data of Secret
// ref (key kubeconfig). The kubeconfig must embed its certificates and
// credentials: files it names would not exist where the agent runs.
func spokeConfig(data map[string][]byte, ref string) (*rest.Config, error) {
	raw := data[KubeconfigKey]
	if len(raw) == 0 {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s has no key %s", ref, KubeconfigKey)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: key %s is not a usable kubeconfig: %w", ref, KubeconfigKey, err)
	}
	if files := referencedFiles(kc); len(files) > 0 {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s names files %v; embed their contents (kubectl config view --flatten --minify)", ref, files)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: key %s is not a usable kubeconfig: %w", ref, KubeconfigKey, err)
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

// caBundle returns the CA bundle a client configuration trusts.
func caBundle(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 || cfg.CAFile == "" {
		return cfg.CAData, nil
	}
	data, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read the managed cluster's CA file: %w", err)
	}
	return data, nil
}
