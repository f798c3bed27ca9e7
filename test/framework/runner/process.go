package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/atomicfile"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

const (
	// runnerStopGrace is how long a process gets between SIGTERM and SIGKILL.
	runnerStopGrace = 10 * time.Second
	// runnerMaxBackoff caps the delay before restarting a process that exited;
	// the delay starts at one second and doubles.
	runnerMaxBackoff = 30 * time.Second
	// runnerBackoffReset is how long a process must run for its next exit to
	// start the back-off from one second again.
	runnerBackoffReset = time.Minute
	// runnerTokenTTL is the lifetime of the ServiceAccount tokens the Runner
	// requests, and runnerTokenRefresh how often it replaces them.
	runnerTokenTTL     = time.Hour
	runnerTokenRefresh = 20 * time.Minute
	// inClusterServiceAccountDir is where a Pod finds its ServiceAccount token,
	// CA and namespace; the Runner rewrites it to the process's own copy.
	inClusterServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// instance is the Runner's state for one Deployment: the local stand-in for its
// single Pod. A "pod" lasts from one pod template to the next; restarts,
// back-off and emptyDir contents belong to it.
type instance struct {
	key     types.NamespacedName
	dir     string
	logPath string

	hash      string // hash of the pod template this pod was made from; "" for none
	proc      *process.Process
	binary    string
	args      []string
	startedAt time.Time

	restarts  int
	backoff   time.Duration
	notBefore time.Time
	lastExit  string

	blocked      *runnerBlocked
	tokenFor     string
	tokenRefresh time.Time
	// tokenCA is the CA bundle written with the token: a change of the
	// cluster's trusted CAs (a CA rotation) writes the files again, as the
	// kubelet updates a projected kube-root-ca.crt.
	tokenCA    []byte
	mounted    map[string]bool
	refreshErr string
}

// runnerBlocked explains why a process cannot start; it becomes the reason and
// message of the Deployment's Progressing condition.
type runnerBlocked struct {
	reason string
	retry  bool // whether waiting can help without a change to the Deployment
	err    error
}

// Error returns the explanation.
func (b *runnerBlocked) Error() string { return b.err.Error() }

// Unwrap returns the underlying error.
func (b *runnerBlocked) Unwrap() error { return b.err }

// blockedBy returns a runnerBlocked error for reason.
func blockedBy(reason string, retry bool, err error) error {
	return &runnerBlocked{reason: reason, retry: retry, err: err}
}

// newInstance returns the state for Deployment key of the named cluster, with
// its files under dir.
func newInstance(dir, cluster string, key types.NamespacedName) *instance {
	base := filepath.Join(dir, cluster, key.Namespace, key.Name)
	return &instance{key: key, dir: base, logPath: base + ".log", mounted: map[string]bool{}}
}

// saDir is the process's copy of the in-cluster ServiceAccount directory.
func (inst *instance) saDir() string { return filepath.Join(inst.dir, "serviceaccount") }

// resetPod starts a new pod for the template with the given hash: counters,
// back-off and volumes start afresh. The process must be stopped already.
func (inst *instance) resetPod(hash string) {
	inst.hash, inst.binary, inst.args = hash, "", nil
	inst.restarts, inst.backoff, inst.notBefore, inst.lastExit = 0, 0, time.Time{}, ""
	inst.blocked, inst.tokenFor, inst.tokenRefresh, inst.refreshErr = nil, "", time.Time{}, ""
	inst.mounted = map[string]bool{}
	_ = os.RemoveAll(filepath.Join(inst.dir, "volumes"))
}

// reap notices a process that exited on its own and schedules its restart. It
// returns a line for the Runner's log, or "".
func (inst *instance) reap(now time.Time) string {
	if inst.proc == nil {
		return ""
	}
	exited, err := inst.proc.Exited()
	if !exited {
		return ""
	}
	pid, ranFor := inst.proc.Pid(), now.Sub(inst.startedAt)
	inst.proc = nil
	if ranFor >= runnerBackoffReset {
		inst.backoff = 0
	}
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	inst.fail(now, "process exited: "+status)
	return fmt.Sprintf("process %d exited (%s) after %s; restarting in %s", pid, status, ranFor.Round(time.Millisecond), inst.backoff)
}

// fail records a failed run or start and schedules the next attempt after the
// back-off.
func (inst *instance) fail(now time.Time, what string) {
	inst.restarts++
	inst.backoff = nextBackoff(inst.backoff)
	inst.notBefore = now.Add(inst.backoff)
	inst.lastExit = what
}

// nextBackoff returns the delay after prev: 1s, 2s, 4s, ... up to 30s.
func nextBackoff(prev time.Duration) time.Duration {
	if prev <= 0 {
		return time.Second
	}
	return min(2*prev, runnerMaxBackoff)
}

// podTemplateHash identifies a pod template; a process restarts when it changes.
func podTemplateHash(t *corev1.PodTemplateSpec) string {
	b, err := json.Marshal(t)
	if err != nil { // a decoded API object always marshals
		panic(fmt.Sprintf("marshal pod template: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// launch prepares and starts the process for dep. Failures end up in
// inst.blocked (cannot start yet) or as a failed run with back-off.
func (c *clusterRunner) launch(ctx context.Context, dep *appsv1.Deployment, inst *instance, now time.Time) {
	spec, err := c.prepare(ctx, dep, inst, now)
	if err != nil {
		var b *runnerBlocked
		if !errors.As(err, &b) {
			b = &runnerBlocked{reason: ReasonStartFailed, retry: true, err: err}
		}
		if inst.blocked == nil || inst.blocked.Error() != b.Error() {
			c.r.logf("%s/%s: cannot start: %v", c.cluster.Name, inst.key, b)
		}
		inst.blocked = b
		return
	}
	inst.blocked = nil
	inst.binary, inst.args = spec.binary, spec.args
	name := fmt.Sprintf("%s/%s/%s", c.cluster.Name, inst.key.Namespace, inst.key.Name)
	p, err := process.Start(name, spec.binary, spec.args, spec.env, inst.dir, inst.logPath)
	if err != nil {
		inst.fail(now, fmt.Sprintf("start failed: %v", err))
		c.r.logf("%s: %v; retrying in %s", name, err, inst.backoff)
		return
	}
	inst.proc, inst.startedAt = p, now
	// Published at once, not when reconcile returns after writing the
	// status: the process may act on its cluster before that write ends.
	c.publish(inst)
	c.watchExit(inst.key, p)
	c.r.logf("%s: started pid %d: %s %q (log %s)", name, p.Pid(), spec.binary, spec.args, inst.logPath)
}

// prepare resolves everything the process of dep needs: binary, token and
// kubeconfig, volumes, environment and arguments.
func (c *clusterRunner) prepare(ctx context.Context, dep *appsv1.Deployment, inst *instance, now time.Time) (*launchSpec, error) {
	pod := &dep.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		return nil, blockedBy(ReasonCreateContainerConfigError, false, errors.New("the pod template has no containers"))
	}
	ctr := &pod.Containers[0]
	binary, err := c.r.binaryFor(ctr.Image)
	if err != nil {
		return nil, blockedBy(ReasonImageNotMapped, false, err)
	}
	if err := c.ensureToken(ctx, dep.Namespace, serviceAccountName(pod), inst, now); err != nil {
		return nil, err
	}
	mounts, err := c.syncVolumes(ctx, inst, dep.Namespace, pod, ctr)
	if err != nil {
		return nil, err
	}
	fields := podFields{
		namespace: dep.Namespace, name: dep.Name + "-local", serviceAccount: serviceAccountName(pod),
		labels: dep.Spec.Template.Labels, annotations: dep.Spec.Template.Annotations,
	}
	env, err := resolveEnv(ctx, c, fields, ctr)
	if err != nil {
		return nil, blockedBy(ReasonCreateContainerConfigError, true, err)
	}
	home := filepath.Join(inst.dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("create home directory: %w", err)
	}
	spec, err := buildLaunch(launchInput{
		binary: binary, container: ctr, env: env, extraArgs: c.r.opts.ExtraArgs[dep.Name],
		mounts:     append(mounts, pathMapping{from: inClusterServiceAccountDir, to: inst.saDir()}),
		kubeconfig: filepath.Join(inst.dir, "kubeconfig"), home: home, freePort: framework.FreePort,
	})
	if err != nil {
		return nil, blockedBy(ReasonCreateContainerConfigError, false, err)
	}
	return spec, nil
}

// refresh keeps a running process's token and volumes current. Errors are
// logged once each: the process keeps what it has, as with a kubelet.
func (c *clusterRunner) refresh(ctx context.Context, dep *appsv1.Deployment, inst *instance, now time.Time) {
	pod := &dep.Spec.Template.Spec
	var errs []error
	if err := c.ensureToken(ctx, dep.Namespace, serviceAccountName(pod), inst, now); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.syncVolumes(ctx, inst, dep.Namespace, pod, &pod.Containers[0]); err != nil {
		errs = append(errs, err)
	}
	msg := ""
	if err := errors.Join(errs...); err != nil {
		msg = err.Error()
	}
	if msg != inst.refreshErr && msg != "" && ctx.Err() == nil {
		c.r.logf("%s/%s: refreshing a running process: %s", c.cluster.Name, inst.key, msg)
	}
	inst.refreshErr = msg
}

// ensureToken writes a fresh ServiceAccount token, the cluster CA, the
// namespace and a kubeconfig using them into the process directory when the
// current token is due for refresh (or was for another ServiceAccount).
func (c *clusterRunner) ensureToken(ctx context.Context, namespace, sa string, inst *instance, now time.Time) error {
	ca := c.cluster.CAData()
	if inst.tokenFor == sa && now.Before(inst.tokenRefresh) && bytes.Equal(inst.tokenCA, ca) {
		return nil
	}
	token, err := c.cluster.ServiceAccountToken(ctx, namespace, sa, runnerTokenTTL)
	if apierrors.IsNotFound(err) {
		return blockedBy(ReasonWaitingForServiceAccount, true, fmt.Errorf("ServiceAccount %s/%s not found; waiting for it to be created", namespace, sa))
	}
	if err != nil {
		return err
	}
	dir := inst.saDir()
	files := map[string][]byte{"token": []byte(token), "ca.crt": ca, "namespace": []byte(namespace)}
	for name, data := range files {
		if err := atomicfile.Write(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write ServiceAccount %s: %w", name, err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: c.cluster.Server(), CertificateAuthority: filepath.Join(dir, "ca.crt")}
	kc.AuthInfos["serviceaccount"] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(dir, "token")}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "serviceaccount", Namespace: namespace}
	kc.CurrentContext = "local"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(inst.dir, "kubeconfig"), data, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	inst.tokenFor, inst.tokenRefresh, inst.tokenCA = sa, now.Add(runnerTokenRefresh), ca
	return nil
}

// terminate stops inst's process, if any, and waits for it to exit.
func (c *clusterRunner) terminate(inst *instance, why string) error {
	if inst.proc == nil {
		return nil
	}
	p := inst.proc
	inst.proc = nil
	err := p.Stop(runnerStopGrace)
	c.r.logf("%s/%s: stopped pid %d (%s)", c.cluster.Name, inst.key, p.Pid(), why)
	if err != nil {
		return fmt.Errorf("stop process of Deployment %s: %w", inst.key, err)
	}
	return nil
}

// serviceAccountName returns the pod's ServiceAccount, "default" if unset.
func serviceAccountName(pod *corev1.PodSpec) string {
	if pod.ServiceAccountName != "" {
		return pod.ServiceAccountName
	}
	return "default"
}
