package agent

import (
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Defaults of the work agent, as OCM's work agent has them.
const (
	// DefaultWorkers is how many ManifestWorks are reconciled in parallel
	// (OCM's --manifestwork-agent-workers).
	DefaultWorkers = 10
	// DefaultAppliedWorkWorkers is how many AppliedManifestWorks are
	// finalized or evicted in parallel (OCM's
	// --appliedmanifestwork-finalize-controller-workers).
	DefaultAppliedWorkWorkers = 10
	// DefaultResyncInterval is how often every ManifestWork is applied again
	// (with up to 50 % jitter), which also restores objects changed on the
	// managed cluster.
	DefaultResyncInterval = 4 * time.Minute
	// DefaultStatusSyncInterval is how often a work whose feedback rules
	// are polled (feedbackScrapeType Poll, the default) is read again. OCM's
	// binary defaults to 10 s, but its operator deploys the single-replica
	// agent with 60 s; this agent also watches every applied object, so the
	// poll is only a safety net and 60 s is kept.
	DefaultStatusSyncInterval = 60 * time.Second
	// DefaultHubQPS and DefaultHubBurst limit the requests to the hub.
	DefaultHubQPS   = 50
	DefaultHubBurst = 100
	// DefaultKubeQPS and DefaultKubeBurst limit the requests to the managed
	// cluster (the Klusterlet's workConfiguration.kubeAPIQPS and
	// kubeAPIBurst default to the same).
	DefaultKubeQPS   = 50
	DefaultKubeBurst = 100
)

// Options configure the work agent.
type Options struct {
	// Namespace is the agent's namespace on the cluster it runs on (the
	// managed cluster, or the hosting cluster in Hosted mode), where the hub
	// credential Secret lives.
	Namespace string
	// HubKubeconfigSecret is the hub credential Secret the registration agent
	// writes (default hub-kubeconfig-secret).
	HubKubeconfigSecret string
	// ManagedKubeconfigSecret, in Hosted mode, names a Secret in Namespace
	// whose key kubeconfig reaches the managed cluster; the agent then
	// applies there and only the hub credential Secret stays on the cluster
	// it runs on. Empty (Default mode): the managed cluster is that cluster.
	// The Secret is read once, at New.
	ManagedKubeconfigSecret string
	// ManagedCluster is the managed cluster already built by
	// kubeconfig.ManagedCluster (in Hosted mode from ManagedKubeconfigSecret)
	// and shared with the registration agent: one client, one cache; nil:
	// New builds it the same way.
	ManagedCluster cluster.Cluster
	// ClusterName is the managed cluster's name on the hub; empty means the
	// Secret's cluster-name.
	ClusterName string
	// Workers is how many ManifestWorks are reconciled in parallel: applied,
	// their status reported and, once deleted, finalized (one controller
	// does all three; OCM splits them into three controllers).
	Workers int
	// AppliedWorkWorkers is how many AppliedManifestWorks are finalized
	// (their objects deleted) or evicted in parallel.
	AppliedWorkWorkers int
	// ResyncInterval is how often each ManifestWork is applied again.
	ResyncInterval time.Duration
	// HubQPS and HubBurst limit the requests to the hub.
	HubQPS   float32
	HubBurst int
	// KubeQPS and KubeBurst limit the requests to the managed cluster:
	// each client the work agent builds for it (applies, watches of the
	// applied objects, SubjectAccessReviews, AppliedManifestWorks) has a
	// rate limiter of its own with these settings, apart from the
	// registration agent's.
	KubeQPS   float32
	KubeBurst int
	// ExecutorRetryInterval is when a work whose executor ServiceAccount was
	// denied a manifest is tried again (default 60 s); a change of the work
	// tries it at once.
	ExecutorRetryInterval time.Duration
	// ApplyLatency writes a record of each ManifestWork generation's apply
	// to the log and counts the apply outcomes in the metrics
	// work_manifestwork_apply_total and work_manifestwork_resource_apply_total
	// (the ManifestWorkApplyLatency feature gate).
	ApplyLatency bool
	// EvictionGracePeriod is how long an AppliedManifestWork whose
	// ManifestWork is gone from the hub is kept before it and the objects it
	// owns are deleted (default 60 m; 100 years or more never evicts).
	EvictionGracePeriod time.Duration
	// StatusSyncInterval is how often a work with Poll feedback rules is
	// read again (default 60 s), in addition to the watches.
	StatusSyncInterval time.Duration
	// PayloadCacheDir is the directory where the verified chunks of large
	// payloads are kept (the agent's Deployment mounts an emptyDir there).
	// Empty: a new directory under $TMPDIR, removed when the agent stops;
	// when none can be made, chunks are read from the hub each time.
	PayloadCacheDir string
	// PayloadCacheSize bounds the bytes kept in PayloadCacheDir (default
	// DefaultPayloadCacheSize).
	PayloadCacheSize int64
}

// Default fills unset options.
func (o *Options) Default() {
	if o.HubKubeconfigSecret == "" {
		o.HubKubeconfigSecret = operatorv1.HubKubeConfigSecret
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.AppliedWorkWorkers <= 0 {
		o.AppliedWorkWorkers = DefaultAppliedWorkWorkers
	}
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	if o.ExecutorRetryInterval <= 0 {
		o.ExecutorRetryInterval = DefaultExecutorRetryInterval
	}
	if o.EvictionGracePeriod <= 0 {
		o.EvictionGracePeriod = DefaultEvictionGracePeriod
	}
	if o.StatusSyncInterval <= 0 {
		o.StatusSyncInterval = DefaultStatusSyncInterval
	}
	if o.PayloadCacheSize <= 0 {
		o.PayloadCacheSize = DefaultPayloadCacheSize
	}
	if o.HubQPS <= 0 {
		o.HubQPS = DefaultHubQPS
	}
	if o.HubBurst <= 0 {
		o.HubBurst = DefaultHubBurst
	}
	if o.KubeQPS <= 0 {
		o.KubeQPS = DefaultKubeQPS
	}
	if o.KubeBurst <= 0 {
		o.KubeBurst = DefaultKubeBurst
	}
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o.Namespace == "" {
		return errors.New("the work agent needs its namespace (where the hub credential Secret is)")
	}
	if o.ManagedKubeconfigSecret != "" && o.ManagedKubeconfigSecret == o.HubKubeconfigSecret {
		return fmt.Errorf("the managed cluster's kubeconfig Secret %q must differ from the hub credential Secret", o.ManagedKubeconfigSecret)
	}
	return nil
}
