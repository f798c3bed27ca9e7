package registration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// BenchmarkJoinToAvailable measures, over -joins fresh joins of cluster1,
// the seconds from the agent Deployment's creation to the ManagedCluster
// Available on the hub, with the accept done the moment the CSR appears.
// Between joins cluster1 is unjoined and its ManagedCluster deleted.
func BenchmarkJoinToAvailable(b *testing.B) {
	f := benchkit.StartFleet(b, config.HubOperatorValues{}, "cluster1")
	benchJoins(b, f, "", "OCM: 1.47 s on this kind of machine; target ≤ 0.5 s")
}

// BenchmarkJoinToAvailableToken is BenchmarkJoinToAvailable with the token
// registration driver (join --registration-auth token), on a hub whose
// controller manager signs no client certificates: the hub controller
// answers the approved request with a sealed ServiceAccount token.
func BenchmarkJoinToAvailableToken(b *testing.B) {
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{NoClientSigning: true}, "cluster1")
	benchJoins(b, f, operatorv1.TokenAuthType, "the certificate driver's figure is BenchmarkJoinToAvailable's")
}

// benchJoins joins cluster1 -joins times with registration auth (empty: the
// certificate driver) and records the figures.
func benchJoins(b *testing.B, f *benchkit.Fleet, auth, ctxt string) {
	const cluster = "cluster1"
	ctx := b.Context()
	driver := "csr"
	if auth != "" {
		driver = auth
	}
	var runs []benchkit.JoinTimes
	for i := range *joinRuns {
		if i > 0 {
			unjoinCluster(ctx, b, f, cluster)
		}
		t := benchkit.JoinCluster(ctx, b, f, cluster, func(v *config.AgentValues) { v.RegistrationAuth = auth })
		b.Logf("join %d/%d, %s driver (seconds since the agent Deployment was created): %s", i+1, *joinRuns, driver, t)
		runs = append(runs, t)
	}
	avail := make([]float64, len(runs))
	for i, r := range runs {
		avail[i] = r.Available.Seconds()
	}
	p50, worst := benchkit.Quantile(avail, 0.5), benchkit.Quantile(avail, 1)
	benchkit.Record(b, fmt.Sprintf("%s driver: agent start → Available, p50 of %d joins", driver, len(runs)), fmt.Sprintf("%.2f s", p50), ctxt)
	benchkit.Record(b, fmt.Sprintf("%s driver: agent start → Available, max of %d joins", driver, len(runs)), fmt.Sprintf("%.2f s", worst), ctxt)
	benchkit.Record(b, driver+" driver: agent start → Available, every join", benchkit.SecondsList(avail), "")
	benchkit.Record(b, driver+" driver: stages since agent start (medians)", medianStages(runs), "accept runs as soon as the request appears")
	b.ReportMetric(p50, "p50-s")
	b.ReportMetric(worst, "max-s")
	b.ReportMetric(0, "ns/op")
}

// medianStages formats the median of every stage over runs.
func medianStages(runs []benchkit.JoinTimes) string {
	var out benchkit.JoinTimes
	med := func(get func(benchkit.JoinTimes) time.Duration) time.Duration {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = get(r).Seconds()
		}
		return time.Duration(benchkit.Quantile(xs, 0.5) * float64(time.Second))
	}
	out.Process = med(func(t benchkit.JoinTimes) time.Duration { return t.Process })
	out.CSR = med(func(t benchkit.JoinTimes) time.Duration { return t.CSR })
	out.Approved = med(func(t benchkit.JoinTimes) time.Duration { return t.Approved })
	out.Issued = med(func(t benchkit.JoinTimes) time.Duration { return t.Issued })
	out.Accepted = med(func(t benchkit.JoinTimes) time.Duration { return t.Accepted })
	out.Joined = med(func(t benchkit.JoinTimes) time.Duration { return t.Joined })
	out.Available = med(func(t benchkit.JoinTimes) time.Duration { return t.Available })
	return out.String()
}

// unjoinCluster runs `kubectl ocm unjoin` on cluster (in process, through
// the plugin's root command: it removes the agent and, when unused, the
// managed-cluster CRDs), deletes the ManagedCluster on the hub, and waits
// until the agent process, the ManagedCluster and its hub namespace are gone,
// so that the next join starts from scratch as on a new cluster.
func unjoinCluster(ctx context.Context, b *testing.B, f *benchkit.Fleet, cluster string) {
	b.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := root.NewCmdRoot(streams)
	cmd.SetArgs([]string{"unjoin", "--cluster-name", cluster, "--kubeconfig", f.Env.Kubeconfig(), "--context", cluster})
	if err := cmd.ExecuteContext(ctx); err != nil {
		b.Fatalf("kubectl ocm unjoin --cluster-name %s: %v\n%s%s", cluster, err, out, errOut)
	}
	b.Logf("$ kubectl ocm unjoin --cluster-name %s --context %s\n%s", cluster, cluster, out)
	benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "the agent process of "+cluster+" to exit", func(context.Context) (bool, error) {
		return f.Pid(cluster, config.AgentNamespace, benchkit.AgentDeployment) == 0, nil
	})
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	if err := f.HubClient.Delete(ctx, mc); client.IgnoreNotFound(err) != nil {
		b.Fatalf("delete ManagedCluster %s: %v", cluster, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 3*time.Minute, "ManagedCluster "+cluster+" and its hub namespace to be gone", func(ctx context.Context) (bool, error) {
		return allGone(ctx, f.HubClient, []client.Object{mc, ns})
	})
}

// allGone reports whether none of objs exists any more.
func allGone(ctx context.Context, c client.Client, objs []client.Object) (bool, error) {
	for _, o := range objs {
		err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
		switch {
		case err == nil:
			return false, nil
		case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
			return false, err
		}
	}
	return true, nil
}
