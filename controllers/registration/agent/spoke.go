package agent

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
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
	if opts.ManagedCluster != nil {
		return spokeFor(opts.ManagedCluster, opts.ManagedCluster.GetConfig())
	}
	ctx, cancel := context.WithTimeout(context.Background(), managedKubeconfigReadTimeout)
	defer cancel()
	ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
	cfg, err := kubeconfig.ReadManagedCluster(ctx, mgr.GetAPIReader(), ref)
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
