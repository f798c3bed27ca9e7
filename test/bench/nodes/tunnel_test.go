package nodes

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var (
	tunnelGets   = flag.Int("tunnel-gets", 300, "BenchmarkHubTunnel: the GETs measured each way")
	tunnelLogMiB = flag.Int("tunnel-log-mib", 100, "BenchmarkHubTunnel: the size of the log streamed each way, in MiB")
)

// BenchmarkHubTunnel measures cluster1's API server reached through the hub
// tunnel against reached directly, on a hub and cluster1 with nodes where
// the hub controller and the agent run as the Pods they ship as: the
// latency of a GET of one ConfigMap (p50, p99), and the throughput of a Pod
// log of -tunnel-log-mib MiB streamed to the end. Through the hub, a request
// goes client → hub API server (authn, RBAC) → aggregator → hub controller
// Service and Pod → the tunnel (a WebSocket the agent attached through the
// hub's API server) → agent Pod → cluster1's API server → kubelet; directly,
// client → cluster1's API server → kubelet. Both clients are client-go with
// keep-alive connections, as kubectl's.
func BenchmarkHubTunnel(b *testing.B) {
	kubectlOCM, layouts := buildPlugin(b)
	for range b.N {
		env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub", "cluster1"}, Nodes: true, Images: layouts})
		ctx := b.Context()
		ocm := plugin(ctx, b, kubectlOCM, env)
		ocm("hub", "init", "--context", "hub", "--wait")
		token, hubURL, pin := joinCommand(b, ocm)
		ocm("join", "--hub-token", token, "--hub-apiserver", hubURL, "--ca-cert-hash", pin, "--cluster-name", "cluster1", "--context", "cluster1")
		ocm("accept", "--clusters", "cluster1", "--context", "hub", "--wait")

		hub, c1 := env.Cluster("hub"), env.Cluster("cluster1")
		direct := kubernetes.NewForConfigOrDie(c1.RESTConfig())
		viaCfg := rest.CopyConfig(hub.RESTConfig())
		viaCfg.Host += hubtunnel.ProxyPath("cluster1")
		via := kubernetes.NewForConfigOrDie(viaCfg)
		// cluster1 lets the hub's admin, as ocm:hub:<admin>, do anything.
		grantMapped(ctx, b, hub, c1)
		benchkit.Poll(ctx, b, benchkit.FastPoll, 3*time.Minute, "cluster1 answering through the hub", func(ctx context.Context) (bool, error) {
			_, err := via.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})

		const ns = "default"
		if _, err := direct.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tunnel-bench"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		get := func(c kubernetes.Interface) []float64 {
			for range 20 { // warm the connections
				if _, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "tunnel-bench", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			out := make([]float64, 0, *tunnelGets)
			for range *tunnelGets {
				start := time.Now()
				if _, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "tunnel-bench", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
				out = append(out, float64(time.Since(start).Microseconds())/1000)
			}
			sort.Float64s(out)
			return out
		}
		d, v := get(direct), get(via)
		ms := func(xs []float64, q float64) string { return fmt.Sprintf("%.2f ms", benchkit.Quantile(xs, q)) }
		benchkit.Record(b, "GET of a ConfigMap, direct: p50", ms(d, 0.5), fmt.Sprintf("p99 %s, %d GETs", ms(d, 0.99), len(d)))
		benchkit.Record(b, "GET of a ConfigMap, through the hub: p50", ms(v, 0.5), fmt.Sprintf("p99 %s, %d GETs", ms(v, 0.99), len(v)))
		benchkit.Record(b, "GET through the hub: added latency p50", fmt.Sprintf("%.2f ms", benchkit.Quantile(v, 0.5)-benchkit.Quantile(d, 0.5)), "")

		pod := logPod(ctx, b, direct, ns, *tunnelLogMiB)
		size := int64(*tunnelLogMiB) << 20
		stream := func(c kubernetes.Interface) (time.Duration, int64) {
			start := time.Now()
			r, err := c.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{}).Stream(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = r.Close() }()
			n, err := io.Copy(io.Discard, r)
			if err != nil {
				b.Fatal(err)
			}
			return time.Since(start), n
		}
		dt, dn := stream(direct)
		vt, vn := stream(via)
		if dn < size || vn < size {
			b.Fatalf("the log streamed %d bytes directly and %d through the hub, want at least %d", dn, vn, size)
		}
		mibs := func(n int64, d time.Duration) string {
			return fmt.Sprintf("%.0f MiB/s", float64(n)/(1<<20)/d.Seconds())
		}
		benchkit.Record(b, fmt.Sprintf("log of %d MiB, direct", *tunnelLogMiB), mibs(dn, dt), benchkit.Seconds(dt))
		benchkit.Record(b, fmt.Sprintf("log of %d MiB, through the hub", *tunnelLogMiB), mibs(vn, vt), benchkit.Seconds(vt))
		b.ReportMetric(benchkit.Quantile(v, 0.5), "tunnel-get-p50-ms")
		b.ReportMetric(float64(vn)/(1<<20)/vt.Seconds(), "tunnel-log-MiB/s")
	}
}

// grantMapped binds cluster-admin on c1 to the mapped identity of the hub's
// admin.
func grantMapped(ctx context.Context, b *testing.B, hub, c1 *framework.Cluster) {
	b.Helper()
	review, err := hub.Clientset().AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	user := hubtunnel.MappedUser(review.Status.UserInfo.Username)
	if _, err := c1.Clientset().RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tunnel-bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// logPod starts a Pod that writes mib MiB of log lines and then a last line
// "done", and waits until the last line is in its log.
func logPod(ctx context.Context, b *testing.B, c kubernetes.Interface, ns string, mib int) string {
	b.Helper()
	const name = "tunnel-log"
	// 1,024-byte lines: 1,023 characters and a newline.
	script := fmt.Sprintf(`line=$(head -c 1023 /dev/zero | tr '\0' x); yes "$line" | head -n %d; echo done; sleep 3600`, mib*1024)
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "log", Image: "docker.io/library/busybox:latest", Command: []string{"sh", "-c", script}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("the Pod's %d MiB of log written", mib), func(ctx context.Context) (bool, error) {
		raw, err := c.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{TailLines: ptr.To[int64](1)}).DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(raw)) == "done", nil
	})
	return name
}
