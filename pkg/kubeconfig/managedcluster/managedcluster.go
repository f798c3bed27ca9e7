// Package managedcluster gives an agent the managed cluster it works on: its own
// cluster in Default mode, or, in Hosted mode, the cluster a kubeconfig
// Secret on the hosting cluster reaches. It is apart from pkg/kubeconfig so
// that the CLI, which reads kubeconfigs too, does not link the controller
// manager.
package managedcluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// managedReadTimeout bounds the read of the managed cluster's kubeconfig
// Secret when an agent starts.
const managedReadTimeout = 30 * time.Second

// Cluster returns the cluster that an agent running in mgr manages.
// With ref.Name empty (Default mode) that is mgr's own cluster. Otherwise
// (Hosted mode) ref is the Secret, on mgr's cluster (the hosting cluster),
// whose key kubeconfig reaches the managed cluster: Cluster reads it,
// builds the managed cluster with mgr's scheme, mgr's client rate limits
// (QPS and burst) and the transforms of TrimCache and adds it to mgr, which
// starts its cache. The agents of one process call it once and share the
// result, so that the managed cluster is watched once.
func Cluster(mgr manager.Manager, ref types.NamespacedName) (cluster.Cluster, error) {
	if ref.Name == "" {
		return mgr, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), managedReadTimeout)
	defer cancel()
	cfg, err := kubeconfig.ReadManagedCluster(ctx, mgr.GetAPIReader(), ref)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = mgr.GetConfig().QPS, mgr.GetConfig().Burst
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = mgr.GetScheme()
		o.Logger = mgr.GetLogger().WithName("managed-cluster")
		TrimCache(&o.Cache)
	})
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's client from Secret %s: %w", ref, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the managed cluster's cache: %w", err)
	}
	return c, nil
}
