package kubeconfig

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// managedReadTimeout bounds the read of the managed cluster's kubeconfig
// Secret when an agent starts.
const managedReadTimeout = 30 * time.Second

// ManagedCluster returns the cluster that an agent running in mgr manages.
// With ref.Name empty (Default mode) that is mgr's own cluster. Otherwise
// (Hosted mode) ref is the Secret, on mgr's cluster (the hosting cluster),
// whose key kubeconfig reaches the managed cluster: ManagedCluster reads it,
// builds the managed cluster with mgr's scheme and adds it to mgr, which
// starts its cache. The agents of one process call it once and share the
// result, so that the managed cluster is watched once.
func ManagedCluster(mgr manager.Manager, ref types.NamespacedName) (cluster.Cluster, error) {
	if ref.Name == "" {
		return mgr, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), managedReadTimeout)
	defer cancel()
	cfg, err := readManagedCluster(ctx, mgr.GetAPIReader(), ref)
	if err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = mgr.GetScheme()
		o.Logger = mgr.GetLogger().WithName("managed-cluster")
	})
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's client from Secret %s: %w", ref, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the managed cluster's cache: %w", err)
	}
	return c, nil
}

// readManagedCluster reads the Secret ref on the hosting cluster and returns
// the client configuration of the managed cluster's kubeconfig in it. Hosted
// agents (registration and work) reach their managed cluster this way.
func readManagedCluster(ctx context.Context, r client.Reader, ref types.NamespacedName) (*rest.Config, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, ref, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s does not exist on the hosting cluster: run `kubectl ocm join --mode hosted --managed-cluster-kubeconfig FILE` again", ref)
		}
		return nil, fmt.Errorf("read Secret %s with the managed cluster's kubeconfig: %w", ref, err)
	}
	return managedClusterConfig(s.Data, ref.String())
}

// managedClusterConfig returns the client configuration of the kubeconfig
// under KubeconfigKey in data, the contents of the Secret named ref (for
// messages), read by the rule of FromSecret.
func managedClusterConfig(data map[string][]byte, ref string) (*rest.Config, error) {
	info, err := FromSecret(data)
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: %w", ref, err)
	}
	cfg, err := info.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: %w", ref, err)
	}
	return cfg, nil
}
