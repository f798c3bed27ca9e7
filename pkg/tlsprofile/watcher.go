package tlsprofile

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
)

// ReasonInvalid is the reason of the Warning event the Watcher records on
// the ConfigMap when it ignores an invalid profile.
const ReasonInvalid = "InvalidTLSProfile"

// loadRetry bounds how long Load retries a read the API server did not
// answer.
var loadRetry = 2 * time.Minute

// loadBackoff spaces Load's attempts.
var loadBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 8 * time.Second}

// Load reads the ConfigMap ocm-tls-profile in namespace and returns its
// profile with overrides (the flags) applied. A missing ConfigMap is the
// default profile; a bad one is an error naming the key at fault. A read
// the API server does not answer (a timeout, a refused connection, a 5xx:
// it restarts or is overloaded) is retried for up to 2 minutes, logged
// through ctx's logger: a component started while its API server recovers
// waits for it rather than exiting, which would restart it for no reason
// of its own. Forbidden and Unauthorized end it at once.
func Load(ctx context.Context, c kubernetes.Interface, namespace string, overrides Settings) (Profile, error) {
	var cm *corev1.ConfigMap
	var last error
	retryCtx, cancel := context.WithTimeout(ctx, loadRetry)
	defer cancel()
	// DelayFunc keeps retrying at the cap once it reaches it (the
	// Backoff's own Step would end the retries there).
	err := loadBackoff.DelayFunc().Until(retryCtx, true, true, func(ctx context.Context) (bool, error) {
		got, err := c.CoreV1().ConfigMaps(namespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
		switch {
		case err == nil:
			cm = got
			return true, nil
		case apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsForbidden(err):
			return false, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: %w: the component's Role must allow get, list and watch on it, as the shipped one does", namespace, ConfigMapName, err)
		case apierrors.IsUnauthorized(err):
			return false, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: %w", namespace, ConfigMapName, err)
		}
		last = err
		logr.FromContextOrDiscard(ctx).Info("The API server did not answer the TLS profile's read; retrying", "configMap", namespace+"/"+ConfigMapName, "error", err.Error())
		return false, nil
	})
	switch {
	case err == nil:
	case last != nil && ctx.Err() == nil && wait.Interrupted(err):
		// The bound ran out, the API server still not answering.
		return Profile{}, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: no answer for %s: %w", namespace, ConfigMapName, loadRetry, last)
	case last != nil && ctx.Err() != nil:
		return Profile{}, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: %w; the last read: %w", namespace, ConfigMapName, ctx.Err(), last)
	default:
		// Forbidden, Unauthorized, or ctx ended before a read.
		return Profile{}, err
	}
	_, p, err := Resolve(cm, overrides)
	return p, err
}

// Watcher keeps Profile in step with the ConfigMap ocm-tls-profile in
// Namespace. A valid change (or the ConfigMap's removal, which restores
// the default) is put in force for new connections; an invalid one is
// logged with the reason and ignored, so the profile in force stays. It
// is a controller-runtime Runnable that runs in every replica.
type Watcher struct {
	// Client reads the ConfigMap; it needs get, list and watch on it.
	Client kubernetes.Interface
	// Namespace is the component's namespace.
	Namespace string
	// Overrides are the flags, which win over the ConfigMap.
	Overrides Settings
	// Profile is what the watcher updates.
	Profile *Dynamic
	// Log receives changes and the errors of invalid profiles.
	Log logr.Logger
	// Recorder, when set, records a Warning event with reason
	// ReasonInvalid on the ConfigMap for an invalid profile, so that
	// `kubectl describe` shows why it is not in force.
	Recorder events.EventRecorder
	// Check, when set, returns what a valid profile in force leaves
	// unserved on this component (such as the TLS 1.2 clients of a
	// certificate no listed suite can use), to be logged with it.
	Check func(Profile) string
}

// NeedLeaderElection is false: every replica serves TLS.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Start watches the ConfigMap until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(w.Client, 0,
		informers.WithNamespace(w.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ConfigMapName).String()
		}))
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.Update(asConfigMap(obj)) },
		UpdateFunc: func(_, obj any) { w.Update(asConfigMap(obj)) },
		DeleteFunc: func(any) { w.Update(nil) },
	}); err != nil {
		return fmt.Errorf("watch the TLS profile, ConfigMap %s/%s: %w", w.Namespace, ConfigMapName, err)
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// Update puts the profile of cm (nil: no ConfigMap) in force, unless it is
// invalid.
func (w *Watcher) Update(cm *corev1.ConfigMap) {
	current := w.Profile.Profile()
	_, p, err := Resolve(cm, w.Overrides)
	if err != nil {
		w.Log.Error(err, "Invalid TLS profile ignored; the profile in force stays", "configMap", w.Namespace+"/"+ConfigMapName, "profile", current.String())
		if w.Recorder != nil && cm != nil {
			w.Recorder.Eventf(cm, nil, corev1.EventTypeWarning, ReasonInvalid, "Load", "%v; the profile in force stays: %s", err, current)
		}
		return
	}
	if p.Equal(current) {
		return
	}
	w.Profile.Set(p)
	w.Log.Info("TLS profile changed; new connections use it", "configMap", w.Namespace+"/"+ConfigMapName, "profile", p.String(), "previous", current.String())
	if w.Check != nil {
		if warning := w.Check(p); warning != "" {
			w.Log.Info("Warning: "+warning, "profile", p.String())
		}
	}
}

func asConfigMap(obj any) *corev1.ConfigMap {
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}
