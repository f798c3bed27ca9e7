package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
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
	cfg, err := managedConfig(s)
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

// managedConfig returns the client configuration of the kubeconfig (key
// kubeconfig) in the managed cluster's kubeconfig Secret s.
func managedConfig(s *corev1.Secret) (*rest.Config, error) {
	ref := s.Namespace + "/" + s.Name
	data := s.Data[kubeconfigKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s has no key %s", ref, kubeconfigKey)
	}
	cfg, err := kubeconfig.RESTConfig(data)
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: %w", ref, err)
	}
	return cfg, nil
}
