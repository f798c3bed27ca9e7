package agent

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig/managedcluster"
)

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
	// config reaches the manager's cluster (the hosting cluster in Hosted
	// mode), where the hub credential Secret is watched.
	config *rest.Config
	// applier applies manifests with a dynamic client; meta watches the
	// applied objects' metadata only, so that the API server never sends
	// the agent their content.
	applier *apply.Applier
	meta    metadata.Interface
	// executor checks works' executors with SubjectAccessReviews (answers
	// are cached across sessions).
	executor *executorChecker
	// rules evaluates condition rules (CEL programs are kept across sessions).
	rules *ruleEvaluator
	// records writes the apply records of the ManifestWorkApplyLatency
	// feature gate; nil when it is off.
	records *applyRecorder
	// appliedEvents carries the names of AppliedManifestWorks that were
	// deleted (or finalized) to the current session's ManifestWork controller.
	appliedEvents chan event.GenericEvent
	// hub is the connected hub session's view for eviction (nil while
	// disconnected); evictEvents carries AppliedManifestWork names to the
	// AppliedManifestWork controller when their ManifestWork comes or goes.
	hub         atomic.Pointer[hubView]
	evictEvents chan event.GenericEvent
	// payloads keeps what the agent learned of the works' large payloads,
	// and their verified chunks on disk, across sessions.
	payloads payloadCache
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
	managed := opts.ManagedCluster
	if managed == nil {
		var err error
		ref := types.NamespacedName{Namespace: opts.Namespace, Name: opts.ManagedKubeconfigSecret}
		if managed, err = managedcluster.Cluster(mgr, ref); err != nil {
			return nil, err
		}
	}
	// The work agent's own clients of the managed cluster, with its own
	// rate limits (the registration agent's are those of managed's
	// clients); they share managed's connections, scheme, mapper and cache.
	cfg := rateLimited(managed.GetConfig(), opts.KubeQPS, opts.KubeBurst)
	httpClient := managed.GetHTTPClient()
	managedKube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster dynamic client: %w", err)
	}
	metaClient, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster metadata client: %w", err)
	}
	clientOpts := client.Options{HTTPClient: httpClient, Scheme: managed.GetScheme(), Mapper: managed.GetRESTMapper()}
	spokeReader, err := client.New(cfg, clientOpts)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster client: %w", err)
	}
	clientOpts.Cache = &client.CacheOptions{Reader: managed.GetCache()}
	spoke, err := client.New(cfg, clientOpts)
	if err != nil {
		return nil, fmt.Errorf("create managed-cluster client: %w", err)
	}
	rules, err := newRuleEvaluator()
	if err != nil {
		return nil, err
	}
	log := mgr.GetLogger().WithName("work-agent")
	store, err := openChunkStore(opts.PayloadCacheDir, opts.PayloadCacheSize)
	if err != nil {
		// The agent works without it, at the cost of reading the chunks of
		// large payloads from the hub at every pass.
		log.Error(err, "Not keeping the chunks of large payloads on disk: they are read from the hub each time", "dir", opts.PayloadCacheDir)
	}
	var records *applyRecorder
	if opts.ApplyLatency {
		if records, err = newApplyRecorder(applyRecordLogger()); err != nil {
			return nil, err
		}
	}
	return &Agent{
		records:     records,
		rules:       rules,
		executor:    newExecutorChecker(kubeReview(managedKube), impersonatingDryRun(cfg), min(executorCacheTTL, opts.ExecutorRetryInterval)),
		opts:        opts,
		managed:     managed,
		spoke:       spoke,
		spokeReader: spokeReader,
		config:      mgr.GetConfig(),
		// The managed cluster's mapper, shared with its cache, finds new
		// kinds by looking up their group again on a miss.
		applier:       apply.NewApplier(dyn, managed.GetRESTMapper()),
		meta:          metaClient,
		appliedEvents: make(chan event.GenericEvent, 1024),
		evictEvents:   make(chan event.GenericEvent, 1024),
		payloads:      payloadCache{store: store},
		log:           log,
	}, nil
}

// rateLimited returns a copy of cfg whose clients each limit their requests
// to qps per second in bursts of burst, with rate limiters of their own.
func rateLimited(cfg *rest.Config, qps float32, burst int) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = qps, burst, nil
	return c
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
// session running with its current content (hubsession.Run).
func (a *Agent) Start(ctx context.Context) error {
	ctx = ctrl.LoggerInto(ctx, a.log)
	defer func() {
		if err := a.payloads.store.close(); err != nil {
			a.log.Info("Could not remove the payload cache directory", "reason", err.Error())
		}
	}()
	return hubsession.Run(ctx, hubsession.Options{
		Config: a.config, Namespace: a.opts.Namespace, Secret: a.opts.HubKubeconfigSecret,
		ClusterName: a.opts.ClusterName,
	}, a.runSession)
}
