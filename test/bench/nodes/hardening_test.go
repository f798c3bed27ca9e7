package nodes

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var hardeningWorks = flag.Int("hardening-works", 50, "BenchmarkHardening: ManifestWorks created one after another per setup, each timed from create to Applied")

// workPoll is how often workLatencies reads a work's conditions: finer than
// benchkit.FastPoll, since a work on an idle cluster is Applied within tens
// of milliseconds.
const workPoll = 5 * time.Millisecond

// hardeningSetup is one way of installing the product that
// BenchmarkHardening measures.
type hardeningSetup struct {
	// name labels the setup's figures.
	name string
	// hubInit and join are the flags added to `kubectl ocm hub init` and
	// `kubectl ocm join`.
	hubInit, join []string
	// hardened is true when the setup must have left the TLS profile and
	// NetworkPolicies in place; the benchmark checks it before measuring.
	hardened bool
}

// hardeningSetups are the installs measured side by side: as `hub init` and
// `join` make them by default, and with the TLS profile (TLS 1.3 only) and
// the NetworkPolicies of both sides.
var hardeningSetups = []hardeningSetup{
	{name: "default"},
	{
		name:     "TLS 1.3 + NetworkPolicies",
		hubInit:  []string{"--tls-min-version", "VersionTLS13", "--network-policy"},
		join:     []string{"--tls-min-version", "VersionTLS13", "--network-policy"},
		hardened: true,
	},
}

// BenchmarkHardening measures what the TLS profile and the NetworkPolicies
// cost: for each setup of hardeningSetups, on new clusters with nodes, the
// time from `kubectl ocm join` to cluster1 Available (`accept --wait` run
// as soon as join returns), and -hardening-works ManifestWorks created one after
// another, each timed from its create to Applied on the hub (p50, p90). The
// nodes enforce the NetworkPolicies, so the hardened agent reaches its hub
// only through what the policies allow.
func BenchmarkHardening(b *testing.B) {
	kubectlOCM, layouts := buildPlugin(b)
	for range b.N {
		for _, s := range hardeningSetups {
			measureSetup(b, kubectlOCM, layouts, s)
		}
	}
}

// measureSetup installs setup s on a new hub and cluster1 and records its
// join and work figures.
func measureSetup(b *testing.B, kubectlOCM string, layouts []framework.ImageLayout, s hardeningSetup) {
	b.Helper()
	env := framework.StartForTestWith(b, framework.Options{Clusters: []string{"hub", "cluster1"}, Nodes: true, Images: layouts})
	ctx := b.Context()
	ocm := plugin(ctx, b, kubectlOCM, env)
	hub, managed := env.Cluster("hub"), env.Cluster("cluster1")

	ocm(append([]string{"hub", "init", "--context", "hub", "--wait"}, s.hubInit...)...)
	token, url, pin := joinCommand(b, ocm)
	start := time.Now()
	ocm(append([]string{"join", "--hub-token", token, "--hub-apiserver", url, "--ca-cert-hash", pin, "--cluster-name", "cluster1", "--context", "cluster1"}, s.join...)...)
	ocm("accept", "--clusters", "cluster1", "--context", "hub", "--wait")
	available := benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, "cluster1 Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Client().Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
	checkHardening(ctx, b, hub.Client(), managed.Client(), s)
	benchkit.Record(b, s.name+": join → cluster1 Available", benchkit.Seconds(available.Sub(start)), "accept --wait run as soon as join returned")

	times := workLatencies(ctx, b, hub.Client(), *hardeningWorks)
	benchkit.Record(b, fmt.Sprintf("%s: work create → Applied, p50 of %d", s.name, len(times)), fmt.Sprintf("%.0f ms", 1000*benchkit.Quantile(times, 0.5)), "")
	benchkit.Record(b, fmt.Sprintf("%s: work create → Applied, p90 of %d", s.name, len(times)), fmt.Sprintf("%.0f ms", 1000*benchkit.Quantile(times, 0.9)), "")
}

// checkHardening fails b unless the hardening of setup s is in place (or,
// for a default setup, absent): the TLS profile on the ClusterManager and the
// Klusterlet, and NetworkPolicies in the hub's and the agent's namespaces.
func checkHardening(ctx context.Context, b *testing.B, hub, managed client.Client, s hardeningSetup) {
	b.Helper()
	cm := &operatorv1.ClusterManager{}
	if err := hub.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
		b.Fatal(err)
	}
	kl := &operatorv1.Klusterlet{}
	if err := managed.Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, kl); err != nil {
		b.Fatal(err)
	}
	tls := cm.Spec.TLSProfile != nil && cm.Spec.TLSProfile.MinTLSVersion == "VersionTLS13" &&
		kl.Spec.TLSProfile != nil && kl.Spec.TLSProfile.MinTLSVersion == "VersionTLS13"
	hubPolicies, agentPolicies := &networkingv1.NetworkPolicyList{}, &networkingv1.NetworkPolicyList{}
	if err := hub.List(ctx, hubPolicies, client.InNamespace(config.HubNamespace)); err != nil {
		b.Fatal(err)
	}
	if err := managed.List(ctx, agentPolicies, client.InNamespace(config.AgentNamespace)); err != nil {
		b.Fatal(err)
	}
	policies := len(hubPolicies.Items) > 0 && len(agentPolicies.Items) > 0
	if tls != s.hardened || policies != s.hardened {
		b.Fatalf("setup %q: TLS 1.3 on both operators' resources %v, NetworkPolicies on both sides %v (hub %d, agent %d); want %v",
			s.name, tls, policies, len(hubPolicies.Items), len(agentPolicies.Items), s.hardened)
	}
}

// workLatencies creates n ManifestWorks for cluster1 one after another, one
// ConfigMap each, and returns how long each took from its create to Applied
// on the hub, in seconds.
func workLatencies(ctx context.Context, b *testing.B, hub client.Client, n int) []float64 {
	b.Helper()
	times := make([]float64, 0, n)
	for i := range n {
		mw := configMapWork(b, fmt.Sprintf("hardening-%d", i), i)
		start := time.Now()
		if err := hub.Create(ctx, mw); err != nil {
			b.Fatalf("create ManifestWork %s: %v", mw.Name, err)
		}
		applied := benchkit.Poll(ctx, b, workPoll, 2*time.Minute, "ManifestWork "+mw.Name+" Applied", func(ctx context.Context) (bool, error) {
			w := &workv1.ManifestWork{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(mw), w); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied), nil
		})
		times = append(times, applied.Sub(start).Seconds())
	}
	return times
}
