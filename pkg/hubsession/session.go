package hubsession

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

// NewCluster returns the hub of a session as a cluster.Cluster for cfg (a
// copy of Credential.Config the caller may tune), with the project's scheme
// and a cache of the cluster namespace clusterName alone: an agent may read
// nothing else on the hub. The session starts it.
func NewCluster(cfg *rest.Config, clusterName string, log logr.Logger) (cluster.Cluster, error) {
	hub, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = apis.Scheme
		o.Logger = log
		o.Cache = cache.Options{
			DefaultNamespaces: map[string]cache.Config{clusterName: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		}
	})
	if err != nil {
		return nil, fmt.Errorf("create hub client: %w", err)
	}
	return hub, nil
}

// NewController returns a controller of a session, named name, that runs r
// with workers in parallel and logs through log, naming each request's
// object under key. Every session builds its controllers again under the
// same names, so they are unmanaged: the session starts them.
func NewController(name string, r reconcile.Reconciler, workers int, log logr.Logger, key string) (controller.Controller, error) {
	c, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler:              r,
		MaxConcurrentReconciles: workers,
		SkipNameValidation:      ptr.To(true),
		LogConstructor: func(req *reconcile.Request) logr.Logger {
			if req == nil {
				return log.WithValues("controller", name)
			}
			return log.WithValues("controller", name, key, req.Name)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create controller %s: %w", name, err)
	}
	return c, nil
}
