package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/lease"
)

const (
	// credentialCheckInterval is how often a connected agent re-reads its hub
	// credential and checks whether to rotate it.
	credentialCheckInterval = 2 * time.Second
	// unauthorizedThreshold is how many consecutive 401 answers from the hub
	// make the agent bootstrap again.
	unauthorizedThreshold = 2
	// hubRequestTimeout bounds every request to the hub.
	hubRequestTimeout = 30 * time.Second
)

// Agent is the registration agent. It is a manager.Runnable that needs
// leader election: only one replica registers the cluster.
type Agent struct {
	opts Options
	// mgmt is the management cluster, where the agent runs (the managed
	// cluster itself in Default mode, the hosting cluster in Hosted mode): it
	// writes the agent's Secrets and reads and updates the Klusterlet, from
	// the manager's cache.
	mgmt client.Client
	// mgmtReader reads Secrets directly from the management cluster.
	mgmtReader client.Reader
	// spoke reads Nodes and ClusterClaims of the managed cluster from a cache
	// (spokeCache, whose events trigger status syncs).
	spoke      client.Reader
	spokeCache cache.Cache
	// spokeKube probes the managed cluster's health and version and writes
	// its managed namespaces.
	spokeKube kubernetes.Interface
	// spokeMeta lists objects of any kind on the managed cluster.
	spokeMeta metadata.Interface
	// spokeCA is the CA bundle of the managed cluster's API server, reported
	// to the hub with the external server URLs.
	spokeCA []byte
	// now is the clock; tests replace it.
	now func() time.Time
	// triggers asks the status controller for an immediate sync.
	triggers chan event.GenericEvent
	// leaseWake asks the lease loop for an immediate renewal.
	leaseWake chan struct{}
	// csrPoll spaces the checks of a pending bootstrap request; only the
	// bootstrap loop uses it.
	csrPoll quickPoller
	// acceptPoll spaces the checks for the hub's acceptance; only the
	// status reconciler uses it.
	acceptPoll quickPoller

	mu sync.Mutex
	// signerRetry is when the agent may next request a certificate of an
	// announced signing CA (rotation.go); badSignerAnnotation is the last
	// announcement that did not parse, logged once.
	signerRetry         time.Time
	badSignerAnnotation string
	// conn is the hub connection while connected, nil while bootstrapping.
	conn *hubConnection
	// id is the agent's identity once resolved.
	id identity
	// rotation is the outcome of the last certificate rotation, reported as
	// the ClusterCertificateRotated condition.
	rotation *metav1.Condition
	// failingSince is when the managed cluster's API server started failing
	// its health check; zero while healthy.
	failingSince time.Time
	// truncatedClaims is the number of custom claims last left out.
	truncatedClaims int
	// watch is the hub watch of the cluster's ManagedCluster while it runs.
	watch *clusterWatch
	// hubIndex is the current hub's index in
	// opts.BootstrapKubeconfigSecrets; contact is when that hub last renewed
	// the cluster's lease (or was chosen, or connected to); nextHubSearch
	// is when the agent may next look for another hub (failover.go).
	hubIndex      int
	contact       time.Time
	nextHubSearch time.Time
}

// hubConnection is a hub client built from one hub credential.
type hubConnection struct {
	// client makes requests bounded by hubRequestTimeout.
	client client.Client
	// watcher lists and watches, without that bound on a watch's length.
	watcher client.WithWatch
	cred    *hubCredential
	// rotationFraction is this certificate's random rotation threshold.
	rotationFraction float64
	// unauthorized counts consecutive 401 answers from the hub.
	unauthorized atomic.Int32
	// lease renews the cluster's lease on this hub.
	lease lease.Renewer
}

// noteError records whether err is the hub rejecting the credential.
func (c *hubConnection) noteError(err error) {
	switch {
	case err == nil:
		c.unauthorized.Store(0)
	case apierrors.IsUnauthorized(err):
		c.unauthorized.Add(1)
	}
}

// New returns an agent whose management cluster is mgr's. The managed
// cluster is mgr's too (Default mode) unless opts.ManagedKubeconfigSecret
// names a Secret holding its kubeconfig (Hosted mode); New reads that Secret
// once, so the agent must be restarted when it changes.
func New(mgr manager.Manager, opts Options) (*Agent, error) {
	opts.Default()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	sp, err := newSpoke(mgr, opts)
	if err != nil {
		return nil, err
	}
	return &Agent{
		opts:       opts,
		mgmt:       mgr.GetClient(),
		mgmtReader: mgr.GetAPIReader(),
		spoke:      sp.cluster.GetClient(),
		spokeCache: sp.cluster.GetCache(),
		spokeKube:  sp.kube,
		spokeMeta:  sp.meta,
		spokeCA:    sp.ca,
		now:        time.Now,
		triggers:   make(chan event.GenericEvent, 1),
		leaseWake:  make(chan struct{}, 1),
		csrPoll:    quickPoller{first: csrFirstPollInterval, max: csrPollInterval},
		acceptPoll: quickPoller{first: acceptanceFirstPollInterval, max: acceptancePollInterval},
	}, nil
}

// SetupWithManager adds the agent and its status controller to mgr.
func (a *Agent) SetupWithManager(mgr manager.Manager) error {
	if err := mgr.Add(a); err != nil {
		return fmt.Errorf("add registration agent: %w", err)
	}
	return a.setupStatusController(mgr)
}

// NeedLeaderElection makes only the elected replica register the cluster.
func (a *Agent) NeedLeaderElection() bool { return true }

// Start runs the registration loop until ctx ends: resolve the identity, then
// alternate between bootstrapping and staying connected.
func (a *Agent) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("registration-agent")
	ctx = ctrl.LoggerInto(ctx, log)
	id, err := a.waitForIdentity(ctx)
	if err != nil {
		return ignoreCanceled(ctx, err)
	}
	log = log.WithValues("cluster", id.cluster, "agentID", id.agentID)
	ctx = ctrl.LoggerInto(ctx, log)
	a.mu.Lock()
	a.id = id
	a.mu.Unlock()
	log.Info("Registration agent started")
	a.selectInitialHub(ctx)

	force := false
	for ctx.Err() == nil {
		if !force {
			cred, err := a.loadHubCredential(ctx, id)
			if err == nil {
				force = a.runConnected(ctx, id, cred)
				continue
			}
			log.Info("No valid hub credential; bootstrapping", "reason", err.Error())
		}
		if err := a.bootstrap(ctx, id, force); err != nil {
			return ignoreCanceled(ctx, err)
		}
		force = false
	}
	return nil
}

// ignoreCanceled returns nil when err is only ctx ending.
func ignoreCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// runConnected keeps the agent connected with cred: it renews the lease,
// lets the status controller sync, swaps in rotated credentials and rotates
// the certificate when due. It returns when the credential becomes invalid,
// with force true when the hub rejected it although it looks valid.
func (a *Agent) runConnected(ctx context.Context, id identity, cred *hubCredential) (force bool) {
	log := ctrl.LoggerFrom(ctx)
	conn, err := a.connect(cred)
	if err != nil {
		log.Error(err, "Cannot build a hub client from the hub credential")
		return true
	}
	log.V(2).Info("Connected to the hub", "server", cred.config.Host, "credentialExpires", cred.expires)
	a.setConn(conn)
	defer a.setConn(nil)

	leaseCtx, stopLease := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { a.renewLease(leaseCtx) })
	wg.Go(func() { a.watchCluster(leaseCtx, id) })
	wg.Go(func() { a.followHubTrust(leaseCtx) })
	defer wg.Wait()
	defer stopLease()

	ticker := time.NewTicker(credentialCheckInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
		if lost, due := a.hubLost(); due && a.failover(ctx, id, lost) {
			return true
		}
		if conn.unauthorized.Load() >= unauthorizedThreshold {
			log.Info("The hub rejects the hub credential; bootstrapping again")
			a.reportUnauthorized(ctx)
			return true
		}
		next, err := a.loadHubCredential(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				log.Info("The hub credential is no longer valid; bootstrapping again", "reason", err.Error())
			}
			return false
		}
		if next.fingerprint != conn.cred.fingerprint {
			if conn, err = a.connect(next); err != nil {
				log.Error(err, "Cannot build a hub client from the new hub credential")
				return true
			}
			log.Info("Switched to the new hub credential", "credentialExpires", next.expires)
			a.setConn(conn)
		}
		a.rotateIfDue(ctx, id, conn)
	}
}

// connect builds a hub connection from cred: two clients sharing one
// transport and REST mapper, one whose requests (and discovery) time out
// after hubRequestTimeout and one for watches, which last longer.
func (a *Agent) connect(cred *hubCredential) (*hubConnection, error) {
	cfg := rest.CopyConfig(cred.config)
	cfg.Timeout = 0
	unbounded, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create hub HTTP client: %w", err)
	}
	bounded := &http.Client{Transport: unbounded.Transport, Timeout: hubRequestTimeout}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, bounded)
	if err != nil {
		return nil, fmt.Errorf("create hub REST mapper: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme, HTTPClient: bounded, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("create hub client: %w", err)
	}
	w, err := client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme, HTTPClient: unbounded, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("create hub watch client: %w", err)
	}
	return &hubConnection{client: c, watcher: w, cred: cred, rotationFraction: certs.RotationFraction()}, nil
}

// setConn publishes the current hub connection and asks for a status sync.
func (a *Agent) setConn(c *hubConnection) {
	a.mu.Lock()
	a.conn = c
	a.mu.Unlock()
	if c != nil {
		a.noteContact()
		a.trigger()
	}
}

// current returns the hub connection (nil while bootstrapping) and identity.
func (a *Agent) current() (*hubConnection, identity) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn, a.id
}

// trigger asks the status controller for a sync, without blocking.
func (a *Agent) trigger() {
	select {
	case a.triggers <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{}}:
	default:
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
