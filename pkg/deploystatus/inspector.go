package deploystatus

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultLogLines is how many of a container's last log lines a cause
// carries when the Inspector's LogLines is 0.
const DefaultLogLines = 8

// Bounds of what a cause carries of a log.
const (
	// maxLogLine is the length at which a log line is cut.
	maxLogLine = 300
	// logLimitBytes is how much of a log's tail is read at most.
	logLimitBytes = 16 << 10
)

// Inspector judges Deployments with Of and, for one that is not ready,
// finds the Pod-level cause in its Pods. It remembers the last cause seen of
// each Deployment until the Deployment is ready, so that a wait that ends
// without success can name it (Explain).
//
// It lists Pods with its reader and reads logs through the pods/log
// subresource. Without the right to list a namespace's Pods it names only
// what the Deployment says; without the right to read their logs it names
// the cause without log lines. It serves one wait at a time: it is not safe
// for concurrent use.
type Inspector struct {
	// ImageFix is the fix named for an image that cannot be pulled, such as
	// the command's flag that pulls from a mirror; DefaultImageFix when
	// empty.
	ImageFix string
	// LogLines is how many of a container's last log lines a cause
	// carries; DefaultLogLines when 0.
	LogLines int64

	// reader reads Deployments and lists Pods.
	reader client.Reader
	// pods reads logs; nil reads none.
	pods corev1client.PodsGetter
	// podsDenied and logsDenied hold the namespaces whose Pods, or whose
	// Pods' logs, the caller may not read.
	podsDenied, logsDenied map[string]bool
	// logs keeps the log lines read of each run of a container.
	logs map[logKey]logResult
	// last is the last cause seen of each Deployment not ready yet.
	last map[types.NamespacedName]*PodCause
}

// logKey names one run of a container: its Pod, name and restart count,
// and whether its log is that of the previous run.
type logKey struct {
	pod       types.UID
	container string
	restarts  int32
	previous  bool
}

// logResult is what reading a log gave: its last lines, or why it could
// not be read.
type logResult struct {
	lines  []string
	unread string
}

// NewInspector returns an Inspector reading Deployments and Pods with
// reader and logs with pods (nil: no log lines).
func NewInspector(reader client.Reader, pods corev1client.PodsGetter) *Inspector {
	return &Inspector{
		reader: reader, pods: pods,
		podsDenied: map[string]bool{}, logsDenied: map[string]bool{},
		logs: map[logKey]logResult{}, last: map[types.NamespacedName]*PodCause{},
	}
}

// Report is what an Inspector found about one Deployment.
type Report struct {
	// Deployment names the Deployment.
	Deployment types.NamespacedName
	// Status is the Deployment's readiness (Of).
	Status
	// Cause is the Pod-level cause while it is not ready, nil when its Pods
	// show none or may not be read.
	Cause *PodCause
}

// String describes the Deployment and, when there is one, the Pod-level
// cause with its fix, on one line.
func (r Report) String() string {
	s := fmt.Sprintf("Deployment %s: %s", r.Deployment, r.Status)
	if r.Cause != nil {
		s += "; " + r.Cause.String()
	}
	return s
}

// Read reads Deployment key and inspects it; it returns nil, without an
// error, when the Deployment does not exist.
func (in *Inspector) Read(ctx context.Context, key types.NamespacedName) (*Report, error) {
	dep := &appsv1.Deployment{}
	if err := in.reader.Get(ctx, key, dep); err != nil {
		if apierrors.IsNotFound(err) {
			delete(in.last, key)
			return nil, nil
		}
		return nil, fmt.Errorf("read Deployment %s: %w", key, err)
	}
	r := in.Inspect(ctx, dep)
	return &r, nil
}

// Inspect judges dep and, when it is not done, looks in its Pods for the
// cause.
func (in *Inspector) Inspect(ctx context.Context, dep *appsv1.Deployment) Report {
	key := types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}
	r := Report{Deployment: key, Status: Of(dep)}
	if r.Done {
		delete(in.last, key)
		return r
	}
	if r.Cause = in.podCause(ctx, dep); r.Cause != nil {
		in.last[key] = r.Cause
	}
	return r
}

// Last returns the last cause seen of Deployment key while it was not ready,
// nil when none was seen or it became ready since.
func (in *Inspector) Last(key types.NamespacedName) *PodCause {
	return in.last[key]
}

// Explain adds to err, the end of a wait, the last Pod-level cause seen of
// every Deployment that is not ready, with its log lines and fix. It
// returns err as it is when err is nil or no cause was seen.
func (in *Inspector) Explain(err error) error {
	if err == nil || len(in.last) == 0 {
		return err
	}
	keys := make([]types.NamespacedName, 0, len(in.last))
	for k := range in.last {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\nThe last Pod-level cause seen of Deployment %s: %s", k, in.last[k].Detail())
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// podCause returns the cause the newest Pods of dep show, with the log
// lines of a container that exited, or nil.
func (in *Inspector) podCause(ctx context.Context, dep *appsv1.Deployment) *PodCause {
	if in.podsDenied[dep.Namespace] || dep.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return nil
	}
	pods := &corev1.PodList{}
	if err := in.reader.List(ctx, pods, client.InNamespace(dep.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			in.podsDenied[dep.Namespace] = true
		}
		return nil
	}
	// The newest Pods first: those of the rollout under way.
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	imageFix := in.ImageFix
	if imageFix == "" {
		imageFix = DefaultImageFix
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		if c := podCause(pod, imageFix); c != nil {
			if c.isExit() {
				in.readLogs(ctx, pod, c)
			}
			return c
		}
	}
	return nil
}

// readLogs sets the last log lines of the container of c, of its previous
// run unless it is terminated now, or why they could not be read. Each
// run's log is read once.
func (in *Inspector) readLogs(ctx context.Context, pod *corev1.Pod, c *PodCause) {
	if in.pods == nil {
		return
	}
	if in.logsDenied[pod.Namespace] {
		c.LogsUnread = "no right to read pods/log in namespace " + pod.Namespace
		return
	}
	previous := true
	for _, s := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		if s.Name == c.Container && s.State.Terminated != nil {
			previous = false
		}
	}
	key := logKey{pod: pod.UID, container: c.Container, restarts: c.Restarts, previous: previous}
	res, ok := in.logs[key]
	if !ok {
		lines := in.LogLines
		if lines == 0 {
			lines = DefaultLogLines
		}
		data, err := in.pods.Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: c.Container, Previous: previous, TailLines: &lines, LimitBytes: ptr.To[int64](logLimitBytes),
		}).DoRaw(ctx)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			in.logsDenied[pod.Namespace] = true
			res.unread = "no right to read pods/log in namespace " + pod.Namespace
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			res.unread = err.Error()
		default:
			res.lines = lastLines(string(data), int(lines))
		}
		in.logs[key] = res
	}
	c.Logs, c.LogsUnread = res.lines, res.unread
}

// lastLines returns the last n non-empty lines of log, each cut at
// maxLogLine bytes.
func lastLines(log string, n int) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimRight(l, "\r\t ")
		if l == "" {
			continue
		}
		if len(l) > maxLogLine {
			l = strings.ToValidUTF8(l[:maxLogLine], "") + "..."
		}
		out = append(out, l)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
