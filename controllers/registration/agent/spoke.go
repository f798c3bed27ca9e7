package agent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig/managedcluster"
)

// spokeClients are the agent's view of the managed cluster ("spoke"), as
// opposed to the management cluster it runs on. In Default mode both are the
// manager's cluster; in Hosted mode the spoke is a separate cluster.Cluster
// built from the kubeconfig in Options.ManagedKubeconfigSecret.
type spokeClients struct {
	// cluster provides the cached client and the cache whose Node and
	// ClusterClaim events trigger status syncs.
	cluster cluster.Cluster
	// kube probes /livez, reads the server version and discovery, and
	// writes the managed namespaces.
	kube kubernetes.Interface
	// meta lists the objects of any kind in a namespace, metadata only.
	meta metadata.Interface
	// ca is the CA bundle of the managed cluster's API server.
	ca []byte
}

// newSpoke returns the managed cluster's clients: those of
// Options.ManagedCluster when set, else of kubeconfig.ManagedCluster.
func newSpoke(mgr manager.Manager, opts Options) (*spokeClients, error) {
	c := opts.ManagedCluster
	if c == nil {
		var err error
		ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
		if c, err = managedcluster.Cluster(mgr, ref); err != nil {
			return nil, err
		}
	}
	return spokeFor(c)
}

// spokeFor builds the clients of the managed cluster c.
func spokeFor(c cluster.Cluster) (*spokeClients, error) {
	cfg := c.GetConfig()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster clientset: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster metadata client: %w", err)
	}
	ca, err := caBundle(cfg)
	if err != nil {
		return nil, err
	}
	return &spokeClients{cluster: c, kube: kube, meta: meta, ca: ca}, nil
}

// caBundle returns the CA bundle a client configuration trusts: its CA data,
// else the content of its CA file.
func caBundle(cfg *rest.Config) ([]byte, error) {
	// Load the CA only: the client certificate and key are not read here.
	ca := &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: cfg.CAFile, CAData: cfg.CAData}}
	if err := rest.LoadTLSFiles(ca); err != nil {
		return nil, fmt.Errorf("read the managed cluster's CA file: %w", err)
	}
	return ca.CAData, nil
}
