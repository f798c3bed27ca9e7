package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	ocmmcp "github.com/kubectl-ocm/kubectl-ocm/plugins/mcp"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestMCPWithARealClient drives `kubectl ocm mcp` on the shared fleet, whose
// agents and hub tunnel run as Pods, with the MCP Inspector's command-line
// client (make mcp-inspector): over stdio as the hub admin, it lists the
// clusters, reads a Pod's log on cluster1 through the hub, shows a gated
// rollout's stages, is refused an approval without --allow-writes and
// approves it with it; over streamable HTTP each request's bearer token is
// the caller, so a ServiceAccount the hub lets read cluster1 reads the log
// and one it does not gets its 403.
func TestMCPWithARealClient(t *testing.T) {
	f := sharedFleet(t)
	inspector := os.Getenv("OCM_MCP_INSPECTOR")
	if inspector == "" {
		t.Fatal("OCM_MCP_INSPECTOR is not set: run the tests with make test (or make mcp-inspector, then OCM_MCP_INSPECTOR=bin/tools/mcp-inspector/mcp-inspector)")
	}
	hubCluster, c1 := f.env.Cluster("hub"), f.env.Cluster("cluster1")
	hub, managed := hubCluster.Client(), c1.Client()
	ctx := t.Context()
	const ns, pod = "mcp-e2e", "hello"

	require.NoError(t, managed.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	t.Cleanup(func() {
		_ = managed.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	require.NoError(t, managed.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{
			Name: "hello", Image: "docker.io/library/busybox:latest",
			Command: []string{"sh", "-c", `i=0; while true; do echo "hello from cluster1 $i"; i=$((i+1)); sleep 1; done`},
		}}},
	}))
	framework.Eventually(ctx, t, 2*time.Minute, "Pod "+pod+" running on cluster1", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		err := managed.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p)
		return err == nil && p.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})

	// The hub admin's kubeconfig serves stdio; cluster1 lets the admin's
	// mapped identity view the namespace.
	review := &authenticationv1.SelfSubjectReview{}
	require.NoError(t, hub.Create(ctx, review))
	require.NoError(t, managed.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mcp-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: hubtunnel.MappedUser(review.Status.UserInfo.Username)}}}))
	stdio := func(t *testing.T, serverArgs []string, method string, args ...string) inspectorResult {
		t.Helper()
		cmd := append([]string{"-e", "KUBECONFIG=" + f.env.Kubeconfig(), bins.kubectlOCM, "mcp", "--context", "hub"}, serverArgs...)
		return runInspector(t, inspector, append(append(cmd, "--method", method), args...)...)
	}

	t.Run("over stdio: the fleet, a Pod's log through the hub", func(t *testing.T) {
		tools := stdio(t, nil, "tools/list")
		require.Contains(t, tools.raw, `"fleet_overview"`)
		require.NotContains(t, tools.raw, `"rollout_approve"`, "a write tool without --allow-writes")

		var fleet ocmmcp.FleetOutput
		stdio(t, nil, "tools/call", "--tool-name", "fleet_overview").decode(t, &fleet)
		require.Equal(t, 2, fleet.Total, "%+v", fleet)
		require.Equal(t, 2, fleet.Available, "%+v", fleet)

		framework.Eventually(ctx, t, time.Minute, "the Pod's log through the hub", func(context.Context) (bool, error) {
			r := stdio(t, nil, "tools/call", "--tool-name", "pod_logs", "--tool-arg", "cluster=cluster1", "namespace="+ns, "pod="+pod, "tailLines=3")
			var logs ocmmcp.LogsOutput
			if r.isError {
				return false, nil
			}
			r.decode(t, &logs)
			return strings.Count(logs.Log, "hello from cluster1") == 3, nil
		})
	})

	t.Run("over stdio: a rollout's stages; an approval needs --allow-writes", func(t *testing.T) {
		const set = "assisted"
		require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		t.Cleanup(func() {
			_, _ = f.quietOCM(context.Background(), "work", "delete", set, "--replicaset", "-n", ns, "--context", "hub")
			_ = hub.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		})
		f.ocm(t, "clusterset", "bind", "default", "--namespace", ns, "--context", "hub")
		f.ocm(t, "placement", "create", "all", "-n", ns, "--context", "hub")
		manifest := filepath.Join(t.TempDir(), "cm.yaml")
		require.NoError(t, os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: assisted\n  namespace: default\ndata:\n  version: v1\n"), 0o600))
		f.ocm(t, "work", "create", set, "-f", manifest, "--placement", ns+"/all", "--rollout", "Progressive", "--max-concurrency", "1",
			"--gates", "Before", "--stage-size", "1", "--context", "hub")
		framework.Eventually(ctx, t, 2*time.Minute, "the rollout waiting before batch-1", func(ctx context.Context) (bool, error) {
			var st ocmmcp.RolloutStatusOutput
			r := stdio(t, nil, "tools/call", "--tool-name", "rollout_status", "--tool-arg", "namespace="+ns, "name="+set)
			if r.isError {
				return false, nil
			}
			r.decode(t, &st)
			return st.State == rolloutv1alpha1.ReasonAwaitingApproval && len(st.Placements) == 1 && len(st.Placements[0].Stages) == 2, nil
		})

		refused := stdio(t, nil, "tools/call", "--tool-name", "rollout_approve", "--tool-arg", "namespace="+ns, "name="+set)
		require.True(t, refused.failed || refused.isError, "rollout_approve without --allow-writes: %s", refused.raw)
		approvals := &rolloutv1alpha1.RolloutApprovalList{}
		require.NoError(t, hub.List(ctx, approvals, client.InNamespace(ns)))
		require.Empty(t, approvals.Items, "an approval was written without --allow-writes")

		var approved ocmmcp.WriteOutput
		stdio(t, []string{"--allow-writes"}, "tools/call", "--tool-name", "rollout_approve", "--tool-arg", "namespace="+ns, "name="+set).decode(t, &approved)
		require.Contains(t, approved.DryRun, "Gate before stage batch-1 of revision 1")
		require.Contains(t, approved.Result, "approved by "+approved.Caller)
		require.NoError(t, hub.List(ctx, approvals, client.InNamespace(ns)))
		require.Len(t, approvals.Items, 1)
		require.Equal(t, approved.Caller, approvals.Items[0].Spec.Approver)
		framework.Eventually(ctx, t, 2*time.Minute, "the rollout's status naming the approver", func(context.Context) (bool, error) {
			st := stdio(t, nil, "tools/call", "--tool-name", "rollout_status", "--tool-arg", "namespace="+ns, "name="+set)
			return !st.isError && strings.Contains(st.raw, "Approved by "+approved.Caller), nil
		})
	})

	t.Run("over streamable HTTP: each request's token is its caller", func(t *testing.T) {
		// assistant may read the clusters and use cluster1's proxy on the
		// hub, and view namespace mcp-e2e on cluster1; stranger may nothing.
		for _, sa := range []string{"assistant", "stranger"} {
			require.NoError(t, hub.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mcp-" + sa}}))
		}
		assistant := "system:serviceaccount:default:mcp-assistant"
		grantHubProxy(ctx, t, hub, assistant, "cluster1")
		require.NoError(t, hub.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "mcp-e2e-clusters"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "list"}}}}))
		require.NoError(t, hub.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mcp-e2e-clusters"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "mcp-e2e-clusters"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "mcp-assistant"}}}))
		require.NoError(t, managed.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mcp-assistant"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: hubtunnel.MappedUser(assistant)}}}))
		token := func(sa string) string {
			cfg, err := hubCluster.ConfigForServiceAccount(ctx, "default", "mcp-"+sa, time.Hour)
			require.NoError(t, err)
			return cfg.BearerToken
		}

		url := serveMCP(t, f.env.Kubeconfig())
		overHTTP := func(sa string, args ...string) inspectorResult {
			return runInspector(t, inspector, append([]string{url, "--transport", "http", "--header", "Authorization: Bearer " + token(sa)}, args...)...)
		}
		logArgs := []string{"--method", "tools/call", "--tool-name", "pod_logs", "--tool-arg", "cluster=cluster1", "namespace=" + ns, "pod=" + pod, "tailLines=2"}
		framework.Eventually(ctx, t, time.Minute, "the assistant's read of the Pod's log", func(context.Context) (bool, error) {
			r := overHTTP("assistant", logArgs...)
			return !r.isError && strings.Count(r.raw, "hello from cluster1") >= 2, nil
		})
		r := overHTTP("stranger", logArgs...)
		require.True(t, r.isError, "the stranger read the log: %s", r.raw)
		require.Contains(t, r.raw, `system:serviceaccount:default:mcp-stranger`)
		require.Contains(t, r.raw, "managedclusters/proxy")
		r = runInspector(t, inspector, url, "--transport", "http", "--method", "tools/list")
		require.True(t, r.failed, "a request without a token was served: %s", r.raw)
	})
}

// inspectorResult is what one run of the Inspector's CLI printed.
type inspectorResult struct {
	raw string
	// failed: the CLI itself failed (no connection, an unknown tool).
	failed bool
	// isError: the tool's result is an error.
	isError bool
	result  struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
}

// decode decodes the tool's structured result into out, failing t when the
// call failed.
func (r inspectorResult) decode(t *testing.T, out any) {
	t.Helper()
	require.False(t, r.failed || r.isError, "the call failed: %s", r.raw)
	require.NoError(t, json.Unmarshal(r.result.StructuredContent, out), "structured content of %s", r.raw)
}

// runInspector runs the Inspector's CLI with args.
func runInspector(t *testing.T, inspector string, args ...string) inspectorResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, inspector, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := inspectorResult{raw: stdout.String() + stderr.String(), failed: err != nil}
	if err == nil && json.Unmarshal(stdout.Bytes(), &r.result) == nil {
		r.isError = r.result.IsError
	}
	t.Logf("$ mcp-inspector %s\n%s", strings.Join(redactTokens(args), " "), truncateLog(r.raw, 2000))
	return r
}

// serveMCP starts kubectl ocm mcp --listen on a free loopback port with
// kubeconfig (whose credential the server does not use) and returns its
// URL; the server stops with t.
func serveMCP(t *testing.T, kubeconfig string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bins.kubectlOCM, "mcp", "--listen", "127.0.0.1:0", "--context", "hub")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	served := regexp.MustCompile(`Serving MCP \(streamable HTTP\) on (http://127\.0\.0\.1:\d+)/`)
	found := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			if m := served.FindStringSubmatch(s.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u + "/mcp"
	case <-time.After(time.Minute):
		t.Fatal("kubectl ocm mcp --listen did not say where it serves within a minute")
	}
	return ""
}

// redactTokens hides bearer tokens in a logged command line.
func redactTokens(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "Authorization: Bearer ") {
			a = "Authorization: Bearer (token)"
		}
		out[i] = a
	}
	return out
}

// truncateLog cuts s to n bytes for a log.
func truncateLog(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}
