// Package simfleet runs thousands of simulated agents at little cost: they
// share one connection to the hub and one informer per resource, and each
// agent's requests still authenticate as its cluster's own identity.
//
// How identities stay honest: the fleet connects with one identity that
// may impersonate (the harness's), and every request of an agent carries
// Impersonate-User and Impersonate-Group headers naming exactly the user
// and groups of that cluster's agent certificate (certs.AgentSubject), or
// the bootstrap user while it registers. The hub's API server checks that
// the harness may impersonate, then authenticates the request as the
// cluster's agent and authorizes it with the hub's RBAC for that cluster:
// the same per-cluster roles and bindings a certificate would meet, so an
// agent reaching outside its cluster namespace is refused here as it would
// be with its certificate. The registration itself is the real protocol:
// ManagedCluster and CertificateSigningRequest created as the bootstrap
// user, approved by the hub controller and signed by kube-controller-manager.
//
// What is shared, and so not measured per agent: the TLS connection and its
// handshake, and the watches. The fleet lists and watches ManifestWorks,
// CertificateSigningRequests and ManagedClusters once, as the harness, and
// hands each agent the objects of its cluster; a real agent holds its own
// watches of its cluster namespace and ManagedCluster, which cost the hub's
// API server a watcher each.
package simfleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	regcsr "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/lease"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// authenticatedGroup is the group of every authenticated user, named
// explicitly among the impersonated groups.
const authenticatedGroup = "system:authenticated"

// Options configure a Fleet.
type Options struct {
	// BootstrapUser is the user the agents register as; it must be in the
	// ClusterManager's autoApproveUsers. Its group is the bootstrap group.
	BootstrapUser string
	// ServeWorks makes every agent acknowledge the ManifestWorks of its
	// cluster namespace as a work agent does.
	ServeWorks bool
	// Concurrency bounds the registrations running at once.
	Concurrency int
	// WorkWorkers is the number of work status writes in flight at once
	// over the whole fleet.
	WorkWorkers int
	// AgentQPS and AgentBurst are each agent's client-side limits, as the
	// real agent's.
	AgentQPS   float32
	AgentBurst int
	// Timeout bounds each registration.
	Timeout time.Duration
}

// Counters are what the fleet's agents did since it started.
type Counters struct {
	Registered    int64 `json:"registered"`
	Renewals      int64 `json:"renewals"`
	RenewFailures int64 `json:"renewFailures"`
	WorkWrites    int64 `json:"workWrites"`
	WorkFailures  int64 `json:"workFailures"`
}

// Fleet is a set of simulated agents sharing one connection to one hub.
type Fleet struct {
	opts   Options
	cfg    *rest.Config
	rt     http.RoundTripper
	mapper meta.RESTMapper
	// admin is the harness's own identity; it accepts clusters and reads
	// the shared informers.
	admin     client.WithWatch
	bootstrap client.Client

	csrs, clusters, works cache.Store
	queue                 workqueue.TypedRateLimitingInterface[string]

	mu     sync.RWMutex
	agents map[string]*agent

	ctx   context.Context
	loops sync.WaitGroup

	registered, renewals, renewFailures, workWrites, workFailures atomic.Int64
	// leaseLatency times the successful lease renewals of the agents'
	// renew loops, from the start of a renewal to the hub's answer.
	leaseLatency benchkit.LatencyWindow
}

// agent is one simulated cluster agent.
type agent struct {
	cluster string
	// c impersonates the cluster's agent identity.
	c client.Client
	// lease renews the cluster's lease as the real agent does.
	lease lease.Renewer
}

// New connects to the hub of cfg, whose identity must be allowed to
// impersonate users and groups, starts the shared informers and returns
// once they have synced. The fleet runs until ctx ends; Wait then waits for
// its loops.
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Fleet, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 200, 400
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("hub transport: %w", err)
	}
	httpClient := &http.Client{Transport: rt}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	f := &Fleet{opts: opts, cfg: cfg, rt: rt, mapper: mapper, agents: map[string]*agent{}, ctx: ctx,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	if f.admin, err = client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme, Mapper: mapper, HTTPClient: httpClient}); err != nil {
		return nil, err
	}
	if f.bootstrap, err = f.impersonating(opts.BootstrapUser, []string{identity.BootstrapTokenGroup}, 0, 0); err != nil {
		return nil, err
	}
	var synced []cache.InformerSynced
	run := func(list client.ObjectList, obj client.Object, h cache.ResourceEventHandler, opts ...client.ListOption) cache.Store {
		store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: benchkit.ListWatch(f.admin, list, opts...), ObjectType: obj, Handler: h})
		f.loops.Go(func() { informer.RunWithContext(ctx) })
		synced = append(synced, informer.HasSynced)
		return store
	}
	f.csrs = run(&certificatesv1.CertificateSigningRequestList{}, &certificatesv1.CertificateSigningRequest{},
		cache.ResourceEventHandlerFuncs{}, client.HasLabels{clusterv1.ClusterNameLabelKey})
	f.clusters = run(&clusterv1.ManagedClusterList{}, &clusterv1.ManagedCluster{}, cache.ResourceEventHandlerFuncs{})
	if opts.ServeWorks {
		enqueue := func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				f.queue.Add(key)
			}
		}
		f.works = run(&workv1.ManifestWorkList{}, &workv1.ManifestWork{}, cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
		for range max(1, opts.WorkWorkers) {
			f.loops.Go(f.workWorker)
		}
	}
	f.loops.Go(func() {
		<-ctx.Done()
		f.queue.ShutDown()
	})
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil, fmt.Errorf("the fleet's informers did not sync: %w", ctx.Err())
	}
	return f, nil
}

// Wait waits until the fleet's loops have ended (after its context).
func (f *Fleet) Wait() { f.loops.Wait() }

// Counters returns what the agents did so far.
func (f *Fleet) Counters() Counters {
	return Counters{Registered: f.registered.Load(), Renewals: f.renewals.Load(), RenewFailures: f.renewFailures.Load(),
		WorkWrites: f.workWrites.Load(), WorkFailures: f.workFailures.Load()}
}

// TakeLeaseLatency summarizes how long the agents' lease renewals took
// since the last call (or the fleet's start) and starts a new window.
func (f *Fleet) TakeLeaseLatency() benchkit.Summary { return f.leaseLatency.Take() }

// impersonating returns a client over the fleet's connection whose
// requests authenticate as user in groups, limited to qps and burst (none
// when 0).
func (f *Fleet) impersonating(user string, groups []string, qps float32, burst int) (client.Client, error) {
	cfg := rest.CopyConfig(f.cfg)
	cfg.QPS, cfg.Burst = qps, burst
	if qps == 0 {
		cfg.QPS = -1
	}
	imp := transport.ImpersonationConfig{UserName: user, Groups: append(append([]string(nil), groups...), authenticatedGroup)}
	hc := &http.Client{Transport: transport.NewImpersonatingRoundTripper(imp, f.rt)}
	return client.New(cfg, client.Options{Scheme: apis.Scheme, Mapper: f.mapper, HTTPClient: hc})
}

// Register registers clusters, Options.Concurrency at a time, each as its
// agent would, and keeps each one renewing its lease (and acknowledging its
// works) until the fleet's context ends. It returns once every cluster is
// Joined and Available as its agent reported, or with the errors of those
// that are not.
func (f *Fleet) Register(ctx context.Context, clusters []string) error {
	sem := make(chan struct{}, max(1, f.opts.Concurrency))
	errs := make([]error, len(clusters))
	var reg sync.WaitGroup
	for i, cluster := range clusters {
		reg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if errs[i] = f.register(ctx, cluster); errs[i] != nil {
				errs[i] = fmt.Errorf("simulated agent of %s: %w", cluster, errs[i])
			}
		})
	}
	reg.Wait()
	return summarize(errs)
}

// summarize joins the first few of errs and counts the rest, so that a
// failure of thousands of registrations stays readable.
func summarize(errs []error) error {
	const shown = 3
	var first []error
	failed := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		if failed++; len(first) < shown {
			first = append(first, err)
		}
	}
	if failed > shown {
		first = append(first, fmt.Errorf("and %d more of %d registrations failed", failed-shown, len(errs)))
	}
	return errors.Join(first...)
}

// storePoll is how often a registration looks into the shared informers'
// stores: a local read, no request.
const storePoll = 100 * time.Millisecond

// register runs the first join of cluster and starts its agent's loops.
func (f *Fleet) register(ctx context.Context, cluster string) error {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	mc := &clusterv1.ManagedCluster{}
	mc.Name = cluster
	err := f.bootstrap.Create(ctx, mc)
	rejoin := apierrors.IsAlreadyExists(err)
	if err != nil && !rejoin {
		return fmt.Errorf("create ManagedCluster as the bootstrap user: %w", err)
	}
	if err := f.issueCertificate(ctx, cluster, rejoin); err != nil {
		return err
	}
	// Auto-approval accepted the cluster with its first join, which is
	// what it trusts the bootstrap identity with (a request for a cluster
	// accepted before stays pending); the hub admin's accept, as `kubectl
	// ocm accept` would set it, finds it accepted.
	if err := benchkit.AcceptCluster(ctx, f.admin, cluster); err != nil {
		return err
	}
	user, groups := benchkit.SimAgentUser(cluster)
	a := &agent{cluster: cluster}
	if a.c, err = f.impersonating(user, groups, f.opts.AgentQPS, f.opts.AgentBurst); err != nil {
		return err
	}
	var leaseDuration time.Duration
	err = f.waitStore(ctx, "the hub to accept "+cluster, f.clusters, cluster, func(obj any) (bool, error) {
		got := obj.(*clusterv1.ManagedCluster)
		leaseDuration = got.Spec.LeaseDuration()
		return meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted), nil
	})
	if err != nil {
		return err
	}
	// The hub grants the agent access and creates the lease once it has
	// accepted the cluster: until both, the renewal is forbidden or finds
	// no lease.
	var last error
	err = wait.PollUntilContextCancel(ctx, storePoll, true, func(ctx context.Context) (bool, error) {
		last = a.lease.Renew(ctx, a.c, cluster, time.Now())
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("first lease renewal: %w (last error: %v)", err, last)
	}
	if err := benchkit.ReportAvailable(ctx, a.c, cluster); err != nil {
		return err
	}
	f.mu.Lock()
	f.agents[cluster] = a
	f.mu.Unlock()
	f.registered.Add(1)
	f.loops.Go(func() { f.renewLoop(a, leaseDuration) })
	if f.opts.ServeWorks {
		// Works created before the agent existed were skipped.
		for _, key := range f.works.ListKeys() {
			if ns, _, _ := cache.SplitMetaNamespaceKey(key); ns == cluster {
				f.queue.Add(key)
			}
		}
	}
	return nil
}

// issueCertificate requests the agent's client certificate of cluster as
// the bootstrap user and waits until the hub issues it. The request of a
// cluster that registers again (rejoin) is approved as the hub admin.
func (f *Fleet) issueCertificate(ctx context.Context, cluster string, rejoin bool) error {
	csr, _, err := benchkit.NewAgentCSR(cluster)
	if err != nil {
		return err
	}
	if err := f.bootstrap.Create(ctx, csr); err != nil {
		return fmt.Errorf("create CSR as the bootstrap user: %w", err)
	}
	if rejoin {
		// A cluster registered before is no first join: auto-approval
		// leaves its request to the hub admin, who approves it as
		// `kubectl ocm accept` would (a conflict: the hub decided first).
		if err := regcsr.ApproveRequest(ctx, f.admin, csr, "ApprovedByHarness", "the harness registers its simulated cluster again"); err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	return f.waitStore(ctx, "the certificate of CSR "+csr.Name, f.csrs, csr.Name, func(obj any) (bool, error) {
		got := obj.(*certificatesv1.CertificateSigningRequest)
		if st := certs.StateOf(got); st.Decided() && len(got.Status.Certificate) == 0 && !st.Approved {
			return false, fmt.Errorf("CSR %s was denied: %v", csr.Name, got.Status.Conditions)
		}
		return len(got.Status.Certificate) > 0, nil
	})
}

// waitStore polls store for the object of key until done says so.
func (f *Fleet) waitStore(ctx context.Context, what string, store cache.Store, key string, done func(any) (bool, error)) error {
	err := wait.PollUntilContextCancel(ctx, storePoll, true, func(context.Context) (bool, error) {
		obj, ok, err := store.GetByKey(key)
		if err != nil || !ok {
			return false, err
		}
		return done(obj)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// renewLoop renews a's lease once per lease duration, with 10 % jitter as
// the real agent, until the fleet's context ends.
func (f *Fleet) renewLoop(a *agent, duration time.Duration) {
	for {
		t := time.NewTimer(wait.Jitter(duration, 0.1))
		select {
		case <-f.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		switch err := a.lease.Renew(f.ctx, a.c, a.cluster, start); {
		case err == nil:
			f.leaseLatency.Observe(time.Since(start))
			f.renewals.Add(1)
		case f.ctx.Err() == nil:
			f.renewFailures.Add(1)
		}
		if obj, ok, _ := f.clusters.GetByKey(a.cluster); ok {
			duration = obj.(*clusterv1.ManagedCluster).Spec.LeaseDuration()
		}
	}
}

// workWorker acknowledges the works of the queue with their agents'
// identities until the queue shuts down.
func (f *Fleet) workWorker() {
	for {
		key, shutdown := f.queue.Get()
		if shutdown {
			return
		}
		f.ackWork(key)
		f.queue.Done(key)
	}
}

// ackWork acknowledges the work of key with the identity of its cluster's
// agent; works of clusters the fleet does not run are left alone.
func (f *Fleet) ackWork(key string) {
	ns, _, _ := cache.SplitMetaNamespaceKey(key)
	f.mu.RLock()
	a := f.agents[ns]
	f.mu.RUnlock()
	obj, ok, _ := f.works.GetByKey(key)
	if a == nil || !ok {
		return
	}
	switch wrote, err := benchkit.AckWork(f.ctx, a.c, obj.(*workv1.ManifestWork).DeepCopy()); {
	case err == nil && wrote:
		f.workWrites.Add(1)
	case err != nil && f.ctx.Err() == nil:
		f.workFailures.Add(1)
	}
}

// Client returns the client of cluster's agent, nil for a cluster the fleet
// does not run.
func (f *Fleet) Client(cluster string) client.Client {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if a := f.agents[cluster]; a != nil {
		return a.c
	}
	return nil
}
