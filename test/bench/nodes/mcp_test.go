package nodes

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	ocmmcp "github.com/kubectl-ocm/kubectl-ocm/plugins/mcp"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var (
	mcpClusters = flag.Int("mcp-clusters", 100, "BenchmarkMCP: the simulated clusters the fleet overview covers, besides cluster1")
	mcpCalls    = flag.Int("mcp-calls", 100, "BenchmarkMCP: the calls measured of each tool, and of kubectl")
)

// BenchmarkMCP measures the latency of kubectl ocm mcp's tools, called with
// the MCP Go SDK's client over an in-memory connection, beside the same
// request made with kubectl (the binary, a process per request, as a user
// runs it): fleet_overview of cluster1 and -mcp-clusters simulated
// clusters (a ManagedCluster with the conditions, version and claims an
// agent reports, and an add-on each) beside kubectl get managedclusters;
// and pod_logs of the last 100 lines of a Pod on cluster1 through the hub's
// tunnel (hub and agent running as the Pods they ship as) beside kubectl
// logs --tail 100 with a kubeconfig through the hub.
func BenchmarkMCP(b *testing.B) {
	kubectlOCM, layouts := buildPlugin(b)
	binDir, err := framework.KubeBinDir()
	if err != nil {
		b.Fatal(err)
	}
	kubectl := filepath.Join(binDir, "kubectl")
	for range b.N {
		env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub", "cluster1"}, Nodes: true, Images: layouts})
		ctx := b.Context()
		ocm := plugin(ctx, b, kubectlOCM, env)
		ocm("hub", "init", "--context", "hub", "--wait")
		token, hubURL, pin := joinCommand(b, ocm)
		ocm("join", "--hub-token", token, "--hub-apiserver", hubURL, "--ca-cert-hash", pin, "--cluster-name", "cluster1", "--context", "cluster1")
		ocm("accept", "--clusters", "cluster1", "--context", "hub", "--wait")
		hub, c1 := env.Cluster("hub"), env.Cluster("cluster1")
		grantMapped(ctx, b, hub, c1)
		simulateClusters(ctx, b, hub.Client(), *mcpClusters)

		st, ct := mcp.NewInMemoryTransports()
		ss, err := ocmmcp.NewServer(ocmmcp.Config{Hub: hub.RESTConfig()}).Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = ss.Close() }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cs.Close() }()
		tool := func(name string, args map[string]any, check func(*mcp.CallToolResult) error) []float64 {
			out := make([]float64, 0, *mcpCalls)
			for i := range *mcpCalls + 3 {
				start := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				elapsed := time.Since(start)
				if err == nil && res.IsError {
					err = fmt.Errorf("%v", res.Content)
				}
				if err == nil {
					err = check(res)
				}
				if err != nil {
					b.Fatalf("%s: %v", name, err)
				}
				if i >= 3 { // the first calls warm the connections
					out = append(out, float64(elapsed.Microseconds())/1000)
				}
			}
			sort.Float64s(out)
			return out
		}
		run := func(what string, want string, args ...string) []float64 {
			out := make([]float64, 0, *mcpCalls)
			for i := range *mcpCalls + 3 {
				start := time.Now()
				got, err := exec.CommandContext(ctx, kubectl, args...).CombinedOutput()
				elapsed := time.Since(start)
				if err != nil || !strings.Contains(string(got), want) {
					b.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, got)
				}
				if i >= 3 {
					out = append(out, float64(elapsed.Microseconds())/1000)
				}
			}
			sort.Float64s(out)
			return out
		}
		record := func(name string, xs []float64) {
			benchkit.Record(b, name+": p50", fmt.Sprintf("%.1f ms", benchkit.Quantile(xs, 0.5)),
				fmt.Sprintf("p99 %.1f ms, %d calls", benchkit.Quantile(xs, 0.99), len(xs)))
		}

		total := *mcpClusters + 1
		overview := tool("fleet_overview", nil, func(res *mcp.CallToolResult) error {
			if n, _ := res.StructuredContent.(map[string]any)["total"].(float64); int(n) != total {
				return fmt.Errorf("total %v, want %d", res.StructuredContent.(map[string]any)["total"], total)
			}
			return nil
		})
		record(fmt.Sprintf("fleet_overview of %d clusters (MCP)", total), overview)
		record(fmt.Sprintf("kubectl get managedclusters, %d clusters", total),
			run("get managedclusters", "cluster1", "--kubeconfig", env.Kubeconfig(), "--context", "hub", "get", "managedclusters"))

		direct := c1.Clientset()
		pod := logLinesPod(ctx, b, direct, "default", 1000)
		logs := tool("pod_logs", map[string]any{"cluster": "cluster1", "namespace": "default", "pod": pod, "tailLines": 100}, func(res *mcp.CallToolResult) error {
			log, _ := res.StructuredContent.(map[string]any)["log"].(string)
			if n := strings.Count(log, "\n"); n != 100 {
				return fmt.Errorf("%d lines, want 100", n)
			}
			return nil
		})
		record("pod_logs --tail 100 through the hub (MCP)", logs)
		via := filepath.Join(b.TempDir(), "via-hub.kubeconfig")
		viaCfg := rest.CopyConfig(hub.RESTConfig())
		viaCfg.Host += hubtunnel.ProxyPath("cluster1")
		if err := framework.WriteKubeconfig(via, "cluster1-via-hub", viaCfg); err != nil {
			b.Fatal(err)
		}
		record("kubectl logs --tail 100 through the hub",
			run("logs", "line 999", "--kubeconfig", via, "logs", pod, "-n", "default", "--tail", "100"))
		b.ReportMetric(benchkit.Quantile(overview, 0.5), "fleet-overview-p50-ms")
		b.ReportMetric(benchkit.Quantile(logs, 0.5), "pod-logs-p50-ms")
	}
}

// simulateClusters writes n accepted ManagedClusters sim-0001... as their
// agents would report them (Joined, Available, a version and claims), each
// with a ManagedClusterAddOn reported Available.
func simulateClusters(ctx context.Context, b *testing.B, c client.Client, n int) {
	b.Helper()
	now := metav1.Now()
	cond := func(typ, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: reason, LastTransitionTime: now}
	}
	for i := range n {
		name := fmt.Sprintf("sim-%04d", i+1)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "sim"}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 3600}}
		if err := c.Create(ctx, mc); err != nil {
			b.Fatal(err)
		}
		// The hub controller writes the cluster too (its finalizer): retry.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
				return err
			}
			mc.Status.Conditions = []metav1.Condition{cond(clusterv1.ManagedClusterConditionHubAccepted, "HubClusterAdminAccepted"),
				cond(clusterv1.ManagedClusterConditionJoined, "ManagedClusterJoined"), cond(clusterv1.ManagedClusterConditionAvailable, "ManagedClusterAvailable")}
			mc.Status.Version = clusterv1.ManagedClusterVersion{Kubernetes: "v1.37.1"}
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "platform.open-cluster-management.io", Value: "Other"}}
			return c.Status().Update(ctx, mc)
		}); err != nil {
			b.Fatal(err)
		}
		// The hub controller creates an accepted cluster's namespace too.
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
			b.Fatal(err)
		}
		addon := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "helloworld"}}
		if err := c.Create(ctx, addon); err != nil {
			b.Fatal(err)
		}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(addon), addon); err != nil {
				return err
			}
			addon.Status.Conditions = []metav1.Condition{cond(addonv1alpha1.ManagedClusterAddOnConditionAvailable, "ProbeAvailable")}
			return c.Status().Update(ctx, addon)
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// logLinesPod starts a Pod on c that writes lines "line 0" to "line
// <n-1>" and waits until the last is in its log.
func logLinesPod(ctx context.Context, b *testing.B, c kubernetes.Interface, ns string, n int) string {
	b.Helper()
	const name = "mcp-log"
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "line $i"; i=$((i+1)); done; sleep 3600`, n)
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "log", Image: "docker.io/library/busybox:latest", Command: []string{"sh", "-c", script}}}},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprintf("line %d", n-1)
	benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, "the Pod's last log line", func(ctx context.Context) (bool, error) {
		raw, err := c.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{TailLines: ptr.To[int64](1)}).DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(raw)) == want, nil
	})
	return name
}
