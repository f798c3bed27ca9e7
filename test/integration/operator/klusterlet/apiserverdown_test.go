package klusterlet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestStartWhileTheAPIServerIsDown starts the Klusterlet operator, as its
// Deployment restarts it after a lost lease, while its cluster's API server
// is down: the process waits, serving /healthz (so that its liveness probe
// leaves it be) and failing /readyz, and runs once the API server is back,
// instead of exiting on its first read.
func TestStartWhileTheAPIServerIsDown(t *testing.T) {
	framework.SkipIfShort(t)
	// The runner runs nothing here (no Deployment); the operator runs
	// against the cluster "hub", as a process of the shipped binary.
	ctx, env, _ := hubtest.StartRunner(t, 5*time.Minute, framework.Options{})
	bin := framework.BuildForTest(t, "./controllers/cmd/ocm-controller", config.ControllerImageName)
	cluster := env.Cluster("hub")

	c := cluster.Client()
	crd, err := config.CRD(config.KlusterletsCRDName)
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, crd))
	const namespace = "open-cluster-management"
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, framework.WriteKubeconfig(kubeconfig, "hub", cluster.RESTConfig()))

	require.NoError(t, cluster.StopAPIServer())
	port, err := framework.FreePort()
	require.NoError(t, err)
	health := fmt.Sprintf("127.0.0.1:%d", port)
	logPath := filepath.Join(t.TempDir(), "operator.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	cmd := exec.Command(bin, "operator", "klusterlet", "--kubeconfig", kubeconfig, "--namespace", namespace,
		"--health-probe-bind-address", health, "--metrics-bind-address", "0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	// running fails the wait at once if the operator has exited.
	running := func() error {
		select {
		case <-done:
			return fmt.Errorf("the operator exited (%v); its log:\n%s", waitErr, readLog(t, logPath))
		default:
			return nil
		}
	}
	look := func(ctx context.Context, what string, cond func() bool) {
		t.Helper()
		framework.Eventually(ctx, t, 3*time.Minute, what, func(context.Context) (bool, error) {
			if err := running(); err != nil {
				t.Fatal(err)
			}
			return cond(), nil
		})
	}

	look(ctx, "the operator waiting for its API server, its health endpoint up", func() bool {
		return strings.Contains(readLog(t, logPath), "Waiting for the API server to be ready") &&
			status(ctx, "http://"+health+"/healthz") == http.StatusOK &&
			status(ctx, "http://"+health+"/readyz") == http.StatusServiceUnavailable
	})
	// It keeps waiting: a few more looks, still running, not ready.
	look(ctx, "a further look at the API server", func() bool {
		return strings.Count(readLog(t, logPath), "Waiting for the API server to be ready") >= 3
	})
	require.NoError(t, running())

	require.NoError(t, cluster.StartAPIServer(ctx))
	look(ctx, "the operator running, ready", func() bool {
		return strings.Contains(readLog(t, logPath), "Starting the Klusterlet operator") &&
			status(ctx, "http://"+health+"/readyz") == http.StatusOK
	})
	log := readLog(t, logPath)
	require.Contains(t, log, "The API server is ready")
	require.NotContains(t, log, "create manager")
}

// readLog returns the file at path.
func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// status returns the status of a GET of url, 0 when there is no answer.
func status(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
