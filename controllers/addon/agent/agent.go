package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/lease"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/registration"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
)

// nodeLeaseNamespace holds the nodes' heartbeat Leases, renewed every few
// seconds and never an add-on's: the Lease cache leaves it out.
const nodeLeaseNamespace = "kube-node-lease"

// Agent is the add-on agent. It is a manager.Runnable that needs leader
// election: it watches the hub credential Secret and runs one hub session
// (the lease and registration controllers) at a time.
type Agent struct {
	opts Options
	// config reaches the manager's cluster, where the hub credential Secret
	// is watched.
	config *rest.Config
	// agent reads and writes the pending requests on the manager's cluster,
	// in the agent's namespace.
	agent       client.Client
	agentReader client.Reader
	// managed is the managed cluster: add-on Secrets are written there.
	managed cluster.Cluster
	// leases caches the managed cluster's Leases.
	leases cache.Cache
	// log is the manager's logger, named for the add-on agent.
	log logr.Logger
}

// New returns an add-on agent running in mgr for opts.ManagedCluster (mgr's
// own cluster when nil).
func New(mgr manager.Manager, opts Options) (*Agent, error) {
	opts.Default()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	managed := opts.ManagedCluster
	if managed == nil {
		managed = mgr
	}
	// The cache shares the managed cluster's HTTP client and REST mapper
	// rather than discovering the whole API again.
	leases, err := cache.New(managed.GetConfig(), cache.Options{
		Scheme:     mgr.GetScheme(),
		HTTPClient: managed.GetHTTPClient(),
		Mapper:     managed.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Field: fields.OneTermNotEqualSelector("metadata.namespace", nodeLeaseNamespace)},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's Lease cache: %w", err)
	}
	if err := mgr.Add(leases); err != nil {
		return nil, fmt.Errorf("add the managed cluster's Lease cache: %w", err)
	}
	return &Agent{
		opts: opts, config: mgr.GetConfig(),
		agent: mgr.GetClient(), agentReader: mgr.GetAPIReader(),
		managed: managed, leases: leases,
		log: mgr.GetLogger().WithName("addon-agent"),
	}, nil
}

// SetupWithManager adds the agent to mgr.
func (a *Agent) SetupWithManager(mgr manager.Manager) error {
	if err := mgr.Add(a); err != nil {
		return fmt.Errorf("add add-on agent: %w", err)
	}
	return nil
}

// NeedLeaderElection makes only the elected replica serve add-ons.
func (a *Agent) NeedLeaderElection() bool { return true }

// The hub credential Secret, watched in the agent's namespace.
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=list;watch

// Start watches the hub credential Secret until ctx ends and keeps one hub
// session running with its current content (hubsession.Run).
func (a *Agent) Start(ctx context.Context) error {
	ctx = ctrl.LoggerInto(ctx, a.log)
	return hubsession.Run(ctx, hubsession.Options{
		Config: a.config, Namespace: a.opts.Namespace, Secret: a.opts.HubKubeconfigSecret, ClusterName: a.opts.ClusterName,
	}, a.runSession)
}

// runSession connects to the hub with cred and runs the lease and
// registration controllers until ctx ends or one of them fails.
func (a *Agent) runSession(ctx context.Context, cred *hubsession.Credential) error {
	log := ctrl.LoggerFrom(ctx)
	cfg := rest.CopyConfig(cred.Config)
	cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " addon-agent"
	hub, err := hubsession.NewCluster(cfg, cred.ClusterName, log)
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return fmt.Errorf("create hub client: %w", err)
	}
	lr := &lease.Reconciler{Hub: hub.GetClient(), Leases: a.leases, Cluster: cred.ClusterName, GraceRatio: a.opts.LeaseGraceRatio}
	if a.opts.ManagedCluster != nil {
		lr.HostingLeases = a.agentReader
	}
	lc, err := lr.NewController(hub.GetCache(), a.leases, log)
	if err != nil {
		return err
	}
	rr := &registration.Reconciler{
		Hub: hub.GetClient(), HubDirect: direct, HubInfo: cred.Hub, Cluster: cred.ClusterName,
		Managed: a.managed.GetClient(), ManagedReader: a.managed.GetAPIReader(),
		Agent: a.agent, AgentReader: a.agentReader, Namespace: a.opts.Namespace, Hosted: a.opts.ManagedCluster != nil,
		Driver: a.opts.KubeClientDriver, TokenExpirationSeconds: a.opts.TokenExpirationSeconds,
	}
	secrets, err := registration.NewSecretCache(a.managed, cred.ClusterName)
	if err != nil {
		return err
	}
	rc, err := rr.NewController(hub.GetCache(), secrets, log)
	if err != nil {
		return err
	}
	return runAll(ctx, hub.Start, secrets.Start, lc.Start, rc.Start)
}

// runAll runs each of fns until ctx ends or one of them returns, then stops
// the others and returns their errors.
func runAll(ctx context.Context, fns ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer cancel()
			errs[i] = fn(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
