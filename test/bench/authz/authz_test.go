package authz

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managedcluster"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// probe is the cluster whose agent makes the measured requests.
const probe = "c00001"

// benchLabel marks the per-cluster ClusterRoles and bindings of the earlier
// design that the benchmark creates, so that it deletes them at once.
const benchLabel = "kubectl-ocm.io/bench-authz"

// clusterName is the name of the i-th cluster of the fleet, from 1.
func clusterName(i int) string { return fmt.Sprintf("c%05d", i) }

// BenchmarkAgentAuthorization grows a fleet's authorization objects on a
// hub installed as `hub init` installs it: for each cluster its namespace
// and the RoleBinding the hub makes there (both designs have them). At each
// size it measures the probe cluster's agent twice: with the agents' shared
// ClusterRoleBinding as shipped, and with a ClusterRoleBinding per cluster
// instead (the earlier design: each cluster's own ClusterRole, bound to its
// certificate group, and no shared binding).
func BenchmarkAgentAuthorization(b *testing.B) {
	steps, err := benchkit.ParseList(*sizes, strconv.Atoi)
	if err != nil || len(steps) == 0 || !slices.IsSorted(steps) || steps[0] < 1 {
		b.Fatalf("-sizes %q: want ascending fleet sizes from 1, such as 100,1000,5000 (%v)", *sizes, err)
	}
	env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub"}})
	hub := env.Cluster("hub")
	ctx := b.Context()
	admin := hub.Client()
	hubtest.Install(ctx, b, admin, hubtest.InstallOptions{NoClusterManager: true, NoConversionWebhook: true})
	benchkit.Poll(ctx, b, 200*time.Millisecond, time.Minute, "ManagedCluster "+probe, func(ctx context.Context) (bool, error) {
		err := admin.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: probe}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
		return err == nil, nil
	})
	cfg, err := hub.ConfigForUser(identity.AgentUserName(probe, "agent1"), identity.AgentGroups(probe)...)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	agent, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	shared := &rbacv1.ClusterRoleBinding{}
	if err := admin.Get(ctx, client.ObjectKey{Name: managedcluster.AgentsClusterRole}, shared); err != nil {
		b.Fatalf("the agents' shared ClusterRoleBinding as installed: %v", err)
	}
	made := 0
	for _, n := range steps {
		grow(ctx, b, admin, made, n)
		made = n
		measure(ctx, b, hub, admin, agent, n, "shared binding")

		setShared(ctx, b, admin, shared, false)
		setPerCluster(ctx, b, admin, n, true)
		measure(ctx, b, hub, admin, agent, n, "a binding per cluster")
		setPerCluster(ctx, b, admin, n, false)
		setShared(ctx, b, admin, shared, true)
	}
}

// grow adds clusters from+1 to to: each one's namespace and the
// registration RoleBinding the hub makes in it, and the probe cluster's
// lease.
func grow(ctx context.Context, b *testing.B, admin client.Client, from, to int) {
	b.Helper()
	start := time.Now()
	parallel(ctx, b, from+1, to, func(ctx context.Context, i int) error {
		c := clusterName(i)
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}}); err != nil {
			return err
		}
		return admin.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: managedcluster.RegistrationRoleBindingName(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managedcluster.RegistrationClusterRole},
			Subjects:   identity.AgentSubjects(c, false),
		})
	})
	if from == 0 {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: probe, Name: clusterv1.LeaseName}}
		if err := admin.Create(ctx, lease); err != nil {
			b.Fatalf("create the lease of %s: %v", probe, err)
		}
	}
	b.Logf("%d clusters: namespaces and RoleBindings %d to %d created in %s", to, from+1, to, benchkit.Seconds(time.Since(start)))
}

// oldRules are the rules of an accepted cluster's own ClusterRole in the
// earlier design (without its certificate requests, which it had only
// while it had some).
func oldRules(c string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create"}},
		{APIGroups: []string{"register.open-cluster-management.io"}, Resources: []string{"managedclusters/clientcertificates"}, ResourceNames: []string{c}, Verbs: []string{"renew"}},
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, ResourceNames: []string{c}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters/status"}, ResourceNames: []string{c}, Verbs: []string{"patch", "update"}},
		{APIGroups: []string{"proxy.kubectl-ocm.io"}, Resources: []string{"managedclusters/attach"}, ResourceNames: []string{c}, Verbs: []string{"get"}},
	}
}

// setPerCluster creates (on) or deletes the earlier design's ClusterRole
// and ClusterRoleBinding of clusters 1 to n, and waits until the API
// server's authorizer sees the change at the last cluster.
func setPerCluster(ctx context.Context, b *testing.B, admin client.Client, n int, on bool) {
	b.Helper()
	start := time.Now()
	labels := client.MatchingLabels{benchLabel: "true"}
	if on {
		parallel(ctx, b, 1, n, func(ctx context.Context, i int) error {
			c := clusterName(i)
			meta := metav1.ObjectMeta{Name: managedcluster.ClusterRoleName(c), Labels: labels}
			if err := admin.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: oldRules(c)}); err != nil {
				return err
			}
			return admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: *meta.DeepCopy(),
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name},
				Subjects: identity.AgentSubjects(c, false)})
		})
	} else {
		for _, obj := range []client.Object{&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRole{}} {
			if err := admin.DeleteAllOf(ctx, obj, labels); err != nil {
				b.Fatalf("delete the per-cluster RBAC: %v", err)
			}
		}
	}
	// The last cluster's group alone (not the group every agent has) reads
	// its ManagedCluster only through its own binding.
	last := clusterName(n)
	waitAllowed(ctx, b, admin, identity.AgentUserName(last, "agent1"), []string{identity.ClusterGroup(last)}, last, on)
	b.Logf("%d clusters: per-cluster ClusterRoleBindings %s in %s", n, map[bool]string{true: "created", false: "deleted"}[on], benchkit.Seconds(time.Since(start)))
}

// setShared deletes (on false) or restores the agents' shared
// ClusterRoleBinding, and waits until the authorizer sees it.
func setShared(ctx context.Context, b *testing.B, admin client.Client, shared *rbacv1.ClusterRoleBinding, on bool) {
	b.Helper()
	if on {
		restored := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: shared.Name, Labels: shared.Labels}, RoleRef: shared.RoleRef, Subjects: shared.Subjects}
		if err := admin.Create(ctx, restored); err != nil {
			b.Fatalf("restore the shared binding: %v", err)
		}
	} else if err := admin.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: shared.Name}}); err != nil {
		b.Fatalf("delete the shared binding: %v", err)
	}
	waitAllowed(ctx, b, admin, identity.AgentUserName(probe, "agent1"), []string{identity.ManagedClustersGroup}, probe, on)
}

// waitAllowed waits until a SubjectAccessReview of user in groups reading
// ManagedCluster cluster is answered allowed.
func waitAllowed(ctx context.Context, b *testing.B, admin client.Client, user string, groups []string, cluster string, allowed bool) {
	b.Helper()
	benchkit.Poll(ctx, b, 100*time.Millisecond, 2*time.Minute, fmt.Sprintf("%s reading ManagedCluster %s allowed: %v", user, cluster, allowed), func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: clusterv1.GroupVersion.Group, Resource: "managedclusters", Verb: "get", Name: cluster}}}
		if err := admin.Create(ctx, sar); err != nil {
			return false, err
		}
		return sar.Status.Allowed == allowed, nil
	})
}

// measure has the probe cluster's agent read its lease (a request in its
// namespace, which a RoleBinding there allows, as an idle agent's renewal)
// and its ManagedCluster (cluster-scoped, which a ClusterRoleBinding
// allows), -requests times each in each of -rounds rounds, and records
// the API server's CPU per request less its idle rate (the median round's)
// and the agent's median and 99th percentile latency over every round.
func measure(ctx context.Context, b *testing.B, hub *framework.Cluster, admin client.Client, agent client.Client, n int, design string) {
	b.Helper()
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := admin.List(ctx, bindings); err != nil {
		b.Fatal(err)
	}
	pid := hub.APIServerPid()
	kinds := []struct {
		name string
		get  func(context.Context) error
	}{
		{"lease read", func(ctx context.Context) error {
			return agent.Get(ctx, client.ObjectKey{Namespace: probe, Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
		}},
		{"ManagedCluster read", func(ctx context.Context) error {
			return agent.Get(ctx, client.ObjectKey{Name: probe}, &clusterv1.ManagedCluster{})
		}},
	}
	for _, k := range kinds {
		run(ctx, b, *requests/10, k.get) // warm up connections and caches
		var cpu, lat []time.Duration
		for range *rounds {
			idle := idleRate(b, pid, 2*time.Second)
			cpu0 := procCPU(b, pid)
			start := time.Now()
			lat = append(lat, run(ctx, b, *requests, k.get)...)
			took := time.Since(start)
			busy := procCPU(b, pid) - cpu0 - time.Duration(idle*float64(took))
			cpu = append(cpu, busy/time.Duration(*requests))
		}
		slices.Sort(cpu)
		slices.Sort(lat)
		benchkit.Record(b, fmt.Sprintf("%5d clusters, %s: %s", n, design, k.name),
			fmt.Sprintf("%4d µs API server CPU per request (median of %d rounds); latency p50 %.2f ms, p99 %.2f ms", cpu[len(cpu)/2].Microseconds(),
				len(cpu), ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])),
			fmt.Sprintf("%d ClusterRoleBindings on the hub", len(bindings.Items)))
	}
}

// run calls get count times, -workers at a time, and returns the
// latencies, sorted.
func run(ctx context.Context, b *testing.B, count int, get func(context.Context) error) []time.Duration {
	b.Helper()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, count)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(*workers)
	for range count {
		g.Go(func() error {
			start := time.Now()
			if err := get(ctx); err != nil {
				return fmt.Errorf("the agent's request: %w", err)
			}
			took := time.Since(start)
			mu.Lock()
			lat = append(lat, took)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	return lat
}

// parallel calls create for from to to, four times -workers at a time.
func parallel(ctx context.Context, b *testing.B, from, to int, create func(context.Context, int) error) {
	b.Helper()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4 * *workers)
	for i := from; i <= to; i++ {
		g.Go(func() error { return create(ctx, i) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// idleRate is pid's CPU, in cores, over window.
func idleRate(b *testing.B, pid int, window time.Duration) float64 {
	b.Helper()
	cpu0 := procCPU(b, pid)
	time.Sleep(window) // a sample of the idle rate, not a wait for a state
	return float64(procCPU(b, pid)-cpu0) / float64(window)
}

// procCPU is pid's user and system CPU time so far.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	d, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatalf("read the CPU time of the API server (pid %d): %v", pid, err)
	}
	return d
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
