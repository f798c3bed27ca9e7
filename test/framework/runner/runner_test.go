package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// runnerTestNS is the namespace of the Runner's integration test.
const runnerTestNS = "runner-test"

// TestRunner runs the whoami helper (test/framework/internal/whoami) as a
// Deployment through the component Runner on a real API server, and checks
// identity, arguments, environment, volumes, status and lifecycle.
func TestRunner(t *testing.T) {
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub")
	hub := env.Cluster("hub")
	bin := framework.BuildForTest(t, "./test/framework/internal/whoami", "whoami")
	runner := StartForTest(t, map[string]string{"example.com/whoami": bin}, hub)
	cs := hub.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fx := &runnerFixture{ctx: ctx, hub: hub, cs: cs, runner: runner}

	createRunnerTestObjects(ctx, t, cs)
	// Not labeled for the Runner: must stay untouched.
	ignored := whoamiDeployment("ignored", "whoami", "ignored-report")
	ignored.Labels = nil
	createOrExists(t, func() error {
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, ignored, metav1.CreateOptions{})
		return err
	})
	t.Run("runs as its ServiceAccount with rewritten args and env", fx.runsAsServiceAccount)
	t.Run("keeps ConfigMap volumes in sync", fx.configMapSync)
	t.Run("restarts the process when the pod template changes", fx.templateRestart)
	t.Run("restarts a failing process with back-off and reports it", fx.failingProcess)
	t.Run("runs an example's Deployment, waiting for its ServiceAccount and Secret volume", fx.lateDeployment)
	t.Run("reports an image that maps to no binary", fx.unmappedImage)
	t.Run("stops the process when the Deployment is deleted", fx.deletedDeployment)
	t.Run("leaves unlabeled Deployments alone", fx.unlabeled)
}

// runnerFixture is what the steps of TestRunner share: the hub, the Runner
// on it, and the pid of the first whoami process.
type runnerFixture struct {
	ctx      context.Context
	hub      *framework.Cluster
	cs       kubernetes.Interface
	runner   *Runner
	firstPid int
}

// runsAsServiceAccount checks that the Runner runs a Deployment's process as
// its ServiceAccount, with rewritten args and env.
func (fx *runnerFixture) runsAsServiceAccount(t *testing.T) {
	ctx, cs, runner, hub := fx.ctx, fx.cs, fx.runner, fx.hub
	dep := whoamiDeployment("whoami", "whoami", "whoami-report")
	_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["user"] != "" })
	assert.Equal(t, "system:serviceaccount:"+runnerTestNS+":whoami", report["user"])
	assert.Equal(t, "v1", report["tag"])
	assert.Equal(t, "one", report["value"])
	assert.Equal(t, "whoami-local", report["pod"])
	assert.Equal(t, "hello", report["file"], "the ConfigMap volume is materialized and its mountPath rewritten")
	assert.Empty(t, report["env"], "no in-cluster Service variables")
	assert.True(t, strings.HasPrefix(report["listen"], "127.0.0.1:") && report["listen"] != "127.0.0.1:8080",
		"bind address moved to a free loopback port, got %q", report["listen"])
	fx.firstPid, err = strconv.Atoi(report["pid"])
	require.NoError(t, err)
	// The process reports as soon as it runs; the Runner publishes it as soon
	// as it started it, so wait for the one rather than race the other.
	var info ProcessInfo
	runnerPoll(ctx, t, "the Runner to know pid "+report["pid"], func(context.Context) (bool, error) {
		var ok bool
		info, ok = runner.Process("hub", runnerTestNS, "whoami")
		return ok && info.Pid == fx.firstPid, nil
	})
	assert.Equal(t, runner.LogPath("hub", runnerTestNS, "whoami"), info.LogPath)
	kc, err := clientcmd.LoadFromFile(filepath.Join(info.Dir, "kubeconfig"))
	require.NoError(t, err)
	kctx := kc.Contexts[kc.CurrentContext]
	require.NotNil(t, kctx)
	assert.Equal(t, hub.Server(), kc.Clusters[kctx.Cluster].Server)
	assert.NotEmpty(t, kc.AuthInfos[kctx.AuthInfo].TokenFile, "the kubeconfig reads a token file that the Runner refreshes")
	assert.Empty(t, kc.AuthInfos[kctx.AuthInfo].Token)

	got := waitDeployment(ctx, t, cs, "whoami", "available", func(d *appsv1.Deployment) bool {
		return d.Status.AvailableReplicas == 1 && conditionStatus(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
	})
	assert.Equal(t, got.Generation, got.Status.ObservedGeneration)
	assert.Equal(t, int32(1), got.Status.ReadyReplicas)
	assert.Equal(t, int32(0), got.Status.UnavailableReplicas)
	log, err := os.ReadFile(info.LogPath)
	require.NoError(t, err)
	assert.Contains(t, string(log), "reported")
}

// configMapSync checks that the Runner keeps ConfigMap volumes in sync.
func (fx *runnerFixture) configMapSync(t *testing.T) {
	ctx, cs, firstPid := fx.ctx, fx.cs, fx.firstPid
	cm, err := cs.CoreV1().ConfigMaps(runnerTestNS).Get(ctx, "whoami-files", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["greeting"] = "hello again"
	_, err = cs.CoreV1().ConfigMaps(runnerTestNS).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["file"] == "hello again" })
	assert.Equal(t, strconv.Itoa(firstPid), report["pid"], "a volume change does not restart the process")
}

// templateRestart checks that the Runner restarts the process when the pod
// template changes.
func (fx *runnerFixture) templateRestart(t *testing.T) {
	ctx, cs, firstPid := fx.ctx, fx.cs, fx.firstPid
	dep, err := cs.AppsV1().Deployments(runnerTestNS).Get(ctx, "whoami", metav1.GetOptions{})
	require.NoError(t, err)
	dep.Spec.Template.Spec.Containers[0].Command[1] = "--tag=v2"
	dep.Spec.Template.Spec.Containers[0].Env[1].Value = "two"
	_, err = cs.AppsV1().Deployments(runnerTestNS).Update(ctx, dep, metav1.UpdateOptions{})
	require.NoError(t, err)
	report := waitReport(ctx, t, cs, "whoami-report", func(d map[string]string) bool { return d["value"] == "two" })
	assert.Equal(t, "v2", report["tag"])
	assert.NotEqual(t, strconv.Itoa(firstPid), report["pid"])
	waitProcessGone(t, firstPid)
}

// failingProcess checks that the Runner restarts a failing process with
// back-off and reports it.
func (fx *runnerFixture) failingProcess(t *testing.T) {
	ctx, cs, runner := fx.ctx, fx.cs, fx.runner
	dep := whoamiDeployment("crasher", "whoami", "crasher-report")
	dep.Spec.Template.Spec.Containers[0].Args = append(dep.Spec.Template.Spec.Containers[0].Args, "--exit-code=3")
	_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	got := waitDeployment(ctx, t, cs, "crasher", "ProcessFailed", func(d *appsv1.Deployment) bool {
		return conditionReason(d, appsv1.DeploymentProgressing) == ReasonProcessFailed
	})
	msg := conditionMessage(got, appsv1.DeploymentProgressing)
	assert.Contains(t, msg, "exit status 3")
	assert.Contains(t, msg, runner.LogPath("hub", runnerTestNS, "crasher"))
	assert.Equal(t, corev1.ConditionFalse, conditionStatus(got, appsv1.DeploymentAvailable))
	assert.Equal(t, int32(0), got.Status.AvailableReplicas)
	runnerPoll(ctx, t, "two restarts of crasher", func(context.Context) (bool, error) {
		info, _ := runner.Process("hub", runnerTestNS, "crasher")
		return info.Restarts >= 2, nil
	})
	require.NoError(t, cs.AppsV1().Deployments(runnerTestNS).Delete(ctx, "crasher", metav1.DeleteOptions{}))
}

// lateDeployment checks that the Runner runs an example's Deployment, waiting
// for its ServiceAccount and Secret volume.
func (fx *runnerFixture) lateDeployment(t *testing.T) {
	ctx, cs := fx.ctx, fx.cs
	dep := whoamiDeployment("late", "late-sa", "late-report")
	dep.Labels[apply.PartOfLabelKey] = ExamplesPartOf // as an example add-on's agent
	pod := &dep.Spec.Template.Spec
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: "late-secret"}}})
	pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "hub-kubeconfig", MountPath: "/spoke/hub-kubeconfig"}}
	pod.Containers[0].Args = []string{"--file=/spoke/hub-kubeconfig/kubeconfig"}
	_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	waitDeployment(ctx, t, cs, "late", "WaitingForServiceAccount", func(d *appsv1.Deployment) bool {
		return conditionReason(d, appsv1.DeploymentProgressing) == ReasonWaitingForServiceAccount
	})
	_, err = cs.CoreV1().ServiceAccounts(runnerTestNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "late-sa"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	got := waitDeployment(ctx, t, cs, "late", "FailedMount", func(d *appsv1.Deployment) bool {
		return conditionReason(d, appsv1.DeploymentProgressing) == ReasonFailedMount
	})
	assert.Contains(t, conditionMessage(got, appsv1.DeploymentProgressing), "late-secret")
	_, err = cs.CoreV1().Secrets(runnerTestNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-secret"},
		StringData: map[string]string{"kubeconfig": "written later"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	report := waitReport(ctx, t, cs, "late-report", func(d map[string]string) bool { return d["file"] != "" })
	assert.Equal(t, "written later", report["file"])
	assert.Equal(t, "system:serviceaccount:"+runnerTestNS+":late-sa", report["user"])
	pid, err := strconv.Atoi(report["pid"])
	require.NoError(t, err)

	// Scaling to 0 stops the process and reports zero replicas.
	_, err = cs.AppsV1().Deployments(runnerTestNS).Patch(ctx, "late", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitProcessGone(t, pid)
	waitDeployment(ctx, t, cs, "late", "scaled to 0", func(d *appsv1.Deployment) bool {
		return d.Status.Replicas == 0 && d.Status.AvailableReplicas == 0 && d.Status.ObservedGeneration == d.Generation &&
			conditionStatus(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
	})
}

// unmappedImage checks that the Runner reports an image that maps to no
// binary.
func (fx *runnerFixture) unmappedImage(t *testing.T) {
	ctx, cs := fx.ctx, fx.cs
	dep := whoamiDeployment("unmapped", "whoami", "unmapped-report")
	dep.Spec.Template.Spec.Containers[0].Image = "example.com/unknown:v1"
	_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	got := waitDeployment(ctx, t, cs, "unmapped", "ImageNotMapped", func(d *appsv1.Deployment) bool {
		return conditionReason(d, appsv1.DeploymentProgressing) == ReasonImageNotMapped
	})
	msg := conditionMessage(got, appsv1.DeploymentProgressing)
	assert.Contains(t, msg, `"example.com/unknown:v1"`)
	assert.Contains(t, msg, "known images: whoami")
	assert.Equal(t, corev1.ConditionFalse, conditionStatus(got, appsv1.DeploymentAvailable))
	assert.Contains(t, conditionMessage(got, appsv1.DeploymentAvailable), "example.com/unknown:v1")
}

// deletedDeployment checks that the Runner stops the process when the
// Deployment is deleted.
func (fx *runnerFixture) deletedDeployment(t *testing.T) {
	ctx, cs, runner := fx.ctx, fx.cs, fx.runner
	info, ok := runner.Process("hub", runnerTestNS, "whoami")
	require.True(t, ok)
	require.NotZero(t, info.Pid)
	require.NoError(t, cs.AppsV1().Deployments(runnerTestNS).Delete(ctx, "whoami", metav1.DeleteOptions{}))
	waitProcessGone(t, info.Pid)
	runnerPoll(ctx, t, "the Runner to forget whoami", func(context.Context) (bool, error) {
		_, ok := runner.Process("hub", runnerTestNS, "whoami")
		return !ok, nil
	})
}

// unlabeled checks that the Runner leaves unlabeled Deployments alone.
func (fx *runnerFixture) unlabeled(t *testing.T) {
	ctx, cs, runner := fx.ctx, fx.cs, fx.runner
	got, err := cs.AppsV1().Deployments(runnerTestNS).Get(ctx, "ignored", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Status.Conditions)
	_, ok := runner.Process("hub", runnerTestNS, "ignored")
	assert.False(t, ok)
}

// TestRunnerStopStopsEverything checks that Stop ends every process it started.
func TestRunnerStopStopsEverything(t *testing.T) {
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub")
	hub := env.Cluster("hub")
	bin := framework.BuildForTest(t, "./test/framework/internal/whoami", "whoami")
	runner := StartForTest(t, map[string]string{"whoami": bin}, hub)
	cs := hub.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createRunnerTestObjects(ctx, t, cs)
	var pids []int
	for _, name := range []string{"a", "b"} {
		_, err := cs.AppsV1().Deployments(runnerTestNS).Create(ctx, whoamiDeployment(name, "whoami", name+"-report"), metav1.CreateOptions{})
		require.NoError(t, err)
		report := waitReport(ctx, t, cs, name+"-report", func(d map[string]string) bool { return d["pid"] != "" })
		pid, err := strconv.Atoi(report["pid"])
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	require.NoError(t, runner.Stop())
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d still runs after Stop", pid)
	}
	require.NoError(t, runner.Stop(), "Stop is idempotent")
}
