package nodes

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var (
	works  = flag.Int("works", 500, "BenchmarkOnNodes: ManifestWorks (one ConfigMap each) of the agent's second memory reading")
	settle = flag.Duration("settle", 30*time.Second, "BenchmarkOnNodes: the settle period before each memory reading")
)

// References the agent's memory is read by.
const (
	ocmAgents    = "OCM's klusterlet: 177 MiB RSS for its registration and work agents, measured on this machine"
	kubefleetRef = "KubeFleet's member agent: under 128 MB at 1,000 members, published"
)

// BenchmarkOnNodes installs the hub and joins cluster1 with kubectl-ocm on
// clusters with nodes, and reads: hub init to the hub controller's Pod
// Ready; join to the agent's Pod Ready, and to the cluster Available once
// accepted; the working set of the agent's container (and of the Klusterlet
// operator's) as the kubelet reports it in its resource metrics, idle after
// -settle and again with -works ManifestWorks applied.
func BenchmarkOnNodes(b *testing.B) {
	kubectlOCM, layouts := buildPlugin(b)
	for range b.N {
		env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub", "cluster1"}, Nodes: true, Images: layouts})
		ctx := b.Context()
		ocm := plugin(ctx, b, kubectlOCM, env)
		hub, managed := env.Cluster("hub"), env.Cluster("cluster1")

		start := time.Now()
		ocm("hub", "init", "--context", "hub")
		ready := podReady(ctx, b, hub.Client(), config.HubNamespace, benchkit.HubController)
		benchkit.Record(b, "hub init → hub controller Pod Ready", benchkit.Seconds(ready.Sub(start)), "image pulled from the node's registry, probes passed")

		token, url, pin := joinCommand(b, ocm)
		start = time.Now()
		ocm("join", "--hub-token", token, "--hub-apiserver", url, "--ca-cert-hash", pin, "--cluster-name", "cluster1", "--context", "cluster1")
		agentReady := podReady(ctx, b, managed.Client(), config.AgentNamespace, benchkit.AgentDeployment)
		benchkit.Record(b, "join → agent Pod Ready", benchkit.Seconds(agentReady.Sub(start)), "")
		ocm("accept", "--clusters", "cluster1", "--context", "hub")
		available := benchkit.Poll(ctx, b, benchkit.FastPoll, 3*time.Minute, "cluster1 Available", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Client().Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
		})
		benchkit.Record(b, "join → cluster1 Available (accepted at once)", benchkit.Seconds(available.Sub(start)), "")

		readMemory(ctx, b, managed, "idle")
		applyWorks(ctx, b, hub.Client(), *works)
		readMemory(ctx, b, managed, fmt.Sprintf("%d works", *works))
	}
}

// buildPlugin builds kubectl-ocm, stamped with the tag of the image `make
// image` built so that the image it deploys by default is that one, and
// returns it with the nodes' image layouts.
func buildPlugin(b *testing.B) (string, []framework.ImageLayout) {
	b.Helper()
	layouts, err := framework.DefaultImages()
	if err != nil {
		b.Fatal(err)
	}
	ver, err := framework.LayoutTag(layouts[1].Dir)
	if err != nil {
		b.Fatal(err)
	}
	return framework.BuildForTest(b, "./plugins/kubectl-ocm", "kubectl-ocm", version.StampFlags(ver)...), layouts
}

// plugin returns a function that runs `kubectl ocm args...` with env's
// kubeconfig and fails b when it fails.
func plugin(ctx context.Context, b *testing.B, kubectlOCM string, env *framework.Environment) func(args ...string) string {
	return func(args ...string) string {
		b.Helper()
		cmd := exec.CommandContext(ctx, kubectlOCM, args...)
		cmd.Env = append(cmd.Environ(), "KUBECONFIG="+env.Kubeconfig())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("kubectl ocm %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
}

// joinCommand runs `kubectl ocm hub token` and returns the token, hub URL
// and hub CA pin of the join command it prints.
func joinCommand(b *testing.B, ocm func(args ...string) string) (token, url, pin string) {
	b.Helper()
	out := ocm("hub", "token", "--context", "hub")
	t := regexp.MustCompile(`--hub-token (\S+)`).FindStringSubmatch(out)
	u := regexp.MustCompile(`--hub-apiserver (\S+)`).FindStringSubmatch(out)
	p := regexp.MustCompile(`--ca-cert-hash (sha256:[0-9a-fA-F]+)`).FindStringSubmatch(out)
	if t == nil || u == nil || p == nil {
		b.Fatalf("hub token printed no join command with the hub's CA pin:\n%s", out)
	}
	return t[1], u[1], p[1]
}

// podReady waits until a Pod of Deployment namespace/name is Ready and
// returns when it was seen so.
func podReady(ctx context.Context, b *testing.B, c client.Client, namespace, name string) time.Time {
	b.Helper()
	return benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, "a Ready Pod of Deployment "+namespace+"/"+name, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
		}
		return false, nil
	})
}

// readMemory waits -settle, then reads the working set of the agent's and
// the Klusterlet operator's containers from the kubelet's resource metrics
// and records them.
func readMemory(ctx context.Context, b *testing.B, c *framework.Cluster, label string) {
	b.Helper()
	select {
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	case <-time.After(*settle):
	}
	raw, err := c.Clientset().CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", c.NodeName(), "proxy/metrics/resource").DoRaw(ctx)
	if err != nil {
		b.Fatalf("read the kubelet's resource metrics of %s: %v", c.NodeName(), err)
	}
	m, err := framework.ParseMetrics(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	agent := m.Sum("container_memory_working_set_bytes", map[string]string{"namespace": config.AgentNamespace})
	operator := m.Sum("container_memory_working_set_bytes", map[string]string{"namespace": operatorv1.OperatorNamespace})
	if agent == 0 {
		b.Fatalf("no working set of the agent's container in the kubelet's resource metrics:\n%s", raw)
	}
	benchkit.Record(b, "agent container working set, "+label, benchkit.MiB(uint64(agent)), ocmAgents+"; "+kubefleetRef)
	benchkit.Record(b, "agent + Klusterlet operator containers, "+label, benchkit.MiB(uint64(agent+operator)), "")
}

// applyWorks creates n ManifestWorks for cluster1, one ConfigMap each, and
// waits until every one is Applied.
func applyWorks(ctx context.Context, b *testing.B, hub client.Client, n int) {
	b.Helper()
	for i := range n {
		mw := configMapWork(b, fmt.Sprintf("bench-%d", i), i)
		if err := hub.Create(ctx, mw); err != nil {
			b.Fatalf("create ManifestWork %s: %v", mw.Name, err)
		}
	}
	start := time.Now()
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 10*time.Minute, fmt.Sprintf("%d works Applied", n), func(ctx context.Context) (bool, error) {
		list := &workv1.ManifestWorkList{}
		if err := hub.List(ctx, list, client.InNamespace("cluster1")); err != nil {
			return false, err
		}
		applied := 0
		for _, w := range list.Items {
			if meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) {
				applied++
			}
		}
		return applied >= n, nil
	})
	benchkit.Record(b, fmt.Sprintf("%d works created → all Applied", n), benchkit.Seconds(time.Since(start)), "")
}

// configMapWork returns a ManifestWork for cluster1 named name, holding one
// ConfigMap of that name in namespace default whose data records i.
func configMapWork(b *testing.B, name string, i int) *workv1.ManifestWork {
	b.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Data:       map[string]string{"n": fmt.Sprint(i)},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		b.Fatal(err)
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: name},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
}
