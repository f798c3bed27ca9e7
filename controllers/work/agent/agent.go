package agent

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig/managedcluster"
)

// sessionRetryDelay is how long the agent waits before it starts a new hub
// session after one failed (for example, its cache could not sync because
// the hub has not granted the work permissions yet).
const sessionRetryDelay = 5 * time.Second

// Agent is the work agent. It is a manager.Runnable that needs leader
// election: it watches the hub credential Secret and runs one hub session
// at a time with the current credential.
type Agent struct {
	opts Options
	// managed is the cluster the agent applies to: the manager's cluster in
	// Default mode, a cluster of its own in Hosted mode. Manifests,
	// AppliedManifestWorks, watches and SubjectAccessReviews all go to it,
	// while the hub credential Secret stays on the manager's cluster.
	managed cluster.Cluster
	// spoke writes to the managed cluster and reads AppliedManifestWorks
	// from managed's cache; spokeReader reads around the cache.
	spoke       client.Client
	spokeReader client.Reader
	// kube watches the hub credential Secret on the manager's cluster (the
	// hosting cluster in Hosted mode).
	kube kubernetes.Interface
	// applier applies manifests with a dynamic client; dyn is that client,
	// also used to watch the applied objects.
	applier *apply.Applier
	dyn     dynamic.Interface
	// executor checks works' executors with SubjectAccessReviews (answers
	// are cached across sessions).
	executor *executorChecker
	// rules evaluates condition rules (CEL programs are kept across sessions).
	rules *ruleEvaluator
	// appliedEvents carries the names of AppliedManifestWorks that were
	// deleted (or finalized) to the current session's ManifestWork controller.
	appliedEvents chan event.GenericEvent
	// hub is the connected hub session's view for eviction (nil while
	// disconnected); evictEvents carries AppliedManifestWork names to the
	// AppliedManifestWork controller when their ManifestWork comes or goes.
	hub         atomic.Pointer[hubView]
	evictEvents chan event.GenericEvent
	// log is the manager's logger, named for the work agent.
	log logr.Logger
}

// New returns a work agent that applies to the cluster of mgr or, with
// opts.ManagedKubeconfigSecret, to the managed cluster that Secret reaches.
func New(mgr manager.Manager, opts Options) (*Agent, error) {
	opts.Default()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	managed := opts.ManagedCluster
	if managed == nil {
		ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
		if managed, err = managedcluster.Cluster(mgr, ref); err != nil {
			return nil, err
		}
	}
	cfg := managed.GetConfig()
	managedKube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster discovery client: %w", err)
	}
	rules, err := newRuleEvaluator()
	if err != nil {
		return nil, err
	}
	return &Agent{
		rules:         rules,
		executor:      newExecutorChecker(kubeReview(managedKube), impersonatingDryRun(cfg), min(executorCacheTTL, opts.ExecutorRetryInterval)),
		opts:          opts,
		managed:       managed,
		spoke:         managed.GetClient(),
		spokeReader:   managed.GetAPIReader(),
		kube:          kube,
		applier:       apply.NewApplier(dyn, apply.NewMapper(dc)),
		dyn:           dyn,
		appliedEvents: make(chan event.GenericEvent, 1024),
		evictEvents:   make(chan event.GenericEvent, 1024),
		log:           mgr.GetLogger().WithName("work-agent"),
	}, nil
}

// SetupWithManager adds the agent and its AppliedManifestWork controller to mgr.
func (a *Agent) SetupWithManager(mgr manager.Manager) error {
	if err := a.setupAppliedWorkController(mgr); err != nil {
		return err
	}
	if err := mgr.Add(a); err != nil {
		return fmt.Errorf("add work agent: %w", err)
	}
	return nil
}

// NeedLeaderElection makes only the elected replica apply works.
func (a *Agent) NeedLeaderElection() bool { return true }

// notifyApplied tells the current session that AppliedManifestWork name
// changed (was deleted or finalized). It never blocks: a session that
// starts later lists every ManifestWork anyway.
func (a *Agent) notifyApplied(name string) {
	ev := event.GenericEvent{Object: &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	select {
	case a.appliedEvents <- ev:
	default:
	}
}

// The hub credential Secret, watched in the agent's namespace.
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=list;watch

// Start watches the hub credential Secret until ctx ends and keeps one hub
// session running with its current content.
func (a *Agent) Start(ctx context.Context) error {
	log := a.log
	ctx = ctrl.LoggerInto(ctx, log)
	secretRef := a.opts.Namespace + "/" + a.opts.HubKubeconfigSecret

	changed := make(chan struct{}, 1)
	signal := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(a.kube, 0,
		informers.WithNamespace(a.opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", a.opts.HubKubeconfigSecret).String()
		}))
	secrets := factory.Core().V1().Secrets()
	if _, err := secrets.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	}); err != nil {
		return fmt.Errorf("watch Secret %s: %w", secretRef, err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	log.Info("Work agent started; watching the hub credential", "secret", secretRef)
	if !toolscache.WaitForCacheSync(ctx.Done(), secrets.Informer().HasSynced) {
		return nil
	}

	var cur *session
	defer func() { cur.stop() }()
	var retry <-chan time.Time
	lastState := ""
	report := func(state string, keysAndValues ...any) {
		if state != lastState {
			log.Info(state, append([]any{"secret", secretRef}, keysAndValues...)...)
			lastState = state
		}
	}
	for {
		s, err := secrets.Lister().Secrets(a.opts.Namespace).Get(a.opts.HubKubeconfigSecret)
		switch {
		case apierrors.IsNotFound(err) && cur == nil:
			report("Waiting for the hub credential Secret; the registration agent writes it once the cluster is accepted on the hub")
		case apierrors.IsNotFound(err):
			report("The hub credential Secret is gone; keeping the current hub connection until it fails")
		case err != nil:
			report("Cannot read the hub credential Secret", "error", err.Error())
		default:
			cred, perr := parseCredential(s, a.opts.ClusterName)
			switch {
			case perr != nil:
				report("The hub credential Secret is not usable yet", "reason", perr.Error())
			case cur == nil || cur.cred.fingerprint != cred.fingerprint:
				if cur != nil {
					log.Info("The hub credential changed; reconnecting to the hub")
					cur.stop()
				}
				cur = a.startSession(ctx, log, cred)
				retry = nil
				lastState = ""
				log.Info("Connecting to the hub", "secret", secretRef, "hub", cred.config.Host, "cluster", cred.clusterName,
					"agentID", cred.agentID, "hubHash", cred.hubHash)
			}
		}
		var sessionDone <-chan struct{}
		if cur != nil {
			sessionDone = cur.done
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-retry:
			retry = nil
		case <-sessionDone:
			if cur.err != nil {
				log.Error(cur.err, "Hub session ended; starting a new one", "after", sessionRetryDelay)
			}
			cur = nil
			lastState = ""
			retry = time.After(sessionRetryDelay)
			// Wait for the delay (or a Secret change) before reconnecting.
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			case <-retry:
			}
			retry = nil
		}
	}
}

// session is one hub connection: a ManifestWork cache and controller built
// from one hub credential.
type session struct {
	cred   *hubCredential
	cancel context.CancelFunc
	done   chan struct{}
	// err is why the session ended; read it after done is closed.
	err error
}

// stop ends the session and waits for it; a nil session is a no-op.
func (s *session) stop() {
	if s == nil {
		return
	}
	s.cancel()
	<-s.done
}

// startSession runs a hub session with cred until it fails or is stopped.
func (a *Agent) startSession(ctx context.Context, log logr.Logger, cred *hubCredential) *session {
	ctx, cancel := context.WithCancel(ctx)
	s := &session{cred: cred, cancel: cancel, done: make(chan struct{})}
	log = log.WithValues("cluster", cred.clusterName, "hubHash", cred.hubHash)
	go func() {
		defer close(s.done)
		s.err = a.runSession(ctrl.LoggerInto(ctx, log), cred)
		if ctx.Err() != nil {
			s.err = nil
		}
	}()
	return s
}
