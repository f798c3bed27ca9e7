package agent

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// managedKubeconfigReadTimeout bounds the read of the managed cluster's
// kubeconfig Secret at start-up.
const managedKubeconfigReadTimeout = 30 * time.Second

// managedCluster returns the cluster the agent applies to: the manager's own
// cluster in Default mode, or, in Hosted mode (Options.ManagedKubeconfigSecret
// set), a cluster built from the kubeconfig (key kubeconfig) of that Secret on
// the hosting cluster, added to mgr so that mgr starts its cache. This is the
// only place that decides where the managed cluster is: manifests,
// AppliedManifestWorks, watches and SubjectAccessReviews all go through it,
// while the hub credential Secret stays on the manager's cluster.
func managedCluster(mgr manager.Manager, opts Options) (cluster.Cluster, error) {
	if opts.ManagedKubeconfigSecret == "" {
		return mgr, nil
	}
	if opts.ManagedCluster != nil {
		return opts.ManagedCluster, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), managedKubeconfigReadTimeout)
	defer cancel()
	ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
	cfg, err := kubeconfig.ReadManagedCluster(ctx, mgr.GetAPIReader(), ref)
	if err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = mgr.GetScheme()
		o.Logger = mgr.GetLogger().WithName("work-agent").WithName("managed-cluster")
	})
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's client from Secret %s: %w", ref, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the managed cluster's cache: %w", err)
	}
	return c, nil
}
