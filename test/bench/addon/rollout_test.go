package addon

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// configNamespace and configName name the AddOnDeploymentConfig the
	// benchmark sets as the add-on's default configuration.
	configNamespace = "default"
	configName      = "helloworld-bench"
	// roundLabel is the node selector label whose value each change sets.
	roundLabel = "bench.ocm.io/round"
)

// BenchmarkAddonConfigRollout enables the example add-on on -clusters
// clusters, then measures configuration changes until they are rolled out
// to every cluster: first an AddOnDeploymentConfig made the
// ClusterManagementAddOn's default (its nodePlacement changes the agent's
// Deployment), then -config-changes changes of that config's node selector.
// Each is timed from the hub write to the watch delivering the last
// ManagedClusterAddOn with Progressing False Completed and every
// lastAppliedConfig equal to its desiredConfig, the config's at its new spec
// hash.
func BenchmarkAddonConfigRollout(b *testing.B) {
	af := startAddonFleet(b)
	ctx := b.Context()
	n := len(af.clusters)
	start, _, t := af.enableAll(ctx, b)
	_, _, last := t.latencies(start)
	b.Logf("enabled on %d clusters, all Available after %s", n, last.Sub(start).Round(time.Millisecond))

	cfg := nodeSelectorConfig(1)
	if err := af.HubClient.Create(ctx, cfg); err != nil {
		b.Fatalf("create AddOnDeploymentConfig %s/%s: %v", configNamespace, configName, err)
	}
	first := af.rollout(ctx, b, cfg, func(ctx context.Context) error { return af.setDefaultConfig(ctx) })
	benchkit.Record(b, fmt.Sprintf("default AddOnDeploymentConfig set on the ClusterManagementAddOn → rolled out to %d clusters", n), benchkit.Seconds(first.total),
		fmt.Sprintf("rollout strategy All (Manual install); per cluster %s", quantiles(first.perCluster)))

	var totals []float64
	for i := range *configChanges {
		next := nodeSelectorConfig(i + 2)
		r := af.rollout(ctx, b, next, func(ctx context.Context) error {
			cur := &addonv1alpha1.AddOnDeploymentConfig{}
			if err := af.HubClient.Get(ctx, client.ObjectKeyFromObject(next), cur); err != nil {
				return err
			}
			return benchkit.Update(ctx, af.HubClient, cur, func() { cur.Spec = next.Spec })
		})
		totals = append(totals, r.total.Seconds())
		benchkit.Record(b, fmt.Sprintf("change %d/%d: AddOnDeploymentConfig nodeSelector → rolled out to %d clusters", i+1, *configChanges, n),
			benchkit.Seconds(r.total), "per cluster "+quantiles(r.perCluster))
	}
	if len(totals) > 0 {
		benchkit.Record(b, fmt.Sprintf("config change → rolled out to all %d, p50 of %d changes", n, len(totals)),
			fmt.Sprintf("%.2f s", benchkit.Quantile(totals, 0.5)), fmt.Sprintf("%d real clusters, %d simulated; rolled out = the changed deploy work Applied at its generation", len(realClusters), n-len(realClusters)))
		b.ReportMetric(benchkit.Quantile(totals, 0.5), "rollout-p50-s")
	}
	b.ReportMetric(first.total.Seconds(), "first-rollout-s")
	b.ReportMetric(0, "ns/op")
}

// rolloutTimes are the figures of one configuration change.
type rolloutTimes struct {
	// total is from the write to the last cluster rolled out.
	total time.Duration
	// perCluster is from the write to each cluster rolled out, in seconds.
	perCluster []float64
}

// rollout makes the change write (which gives the AddOnDeploymentConfig
// the spec of cfg) and waits until every cluster has rolled it out.
func (af *addonFleet) rollout(ctx context.Context, b *testing.B, cfg *addonv1alpha1.AddOnDeploymentConfig, write func(context.Context) error) rolloutTimes {
	b.Helper()
	hash := serverSpecHash(ctx, b, af.HubClient, cfg)
	pids := map[string]int{}
	for _, c := range realClusters {
		pids[c] = af.Pid(c, addonv1alpha1.DefaultAddonInstallNamespace, agentDeployment)
	}
	res := af.watchAddons(ctx, b, func(mca *addonv1alpha1.ManagedClusterAddOn) bool { return rolledOut(mca, hash) })
	start := time.Now()
	if err := write(ctx); err != nil {
		b.Fatalf("change the add-on's configuration: %v", err)
	}
	t := af.wait(ctx, b, fmt.Sprintf("AddOnDeploymentConfig %s/%s at spec hash %.12s rolled out to %d clusters", configNamespace, configName, hash, len(af.clusters)), res)
	fromStart, _, last := t.latencies(start)
	for _, c := range realClusters {
		b.Logf("%s: the add-on agent ran as pid %d before the change, as pid %d when the change was rolled out", c, pids[c], af.Pid(c, addonv1alpha1.DefaultAddonInstallNamespace, agentDeployment))
	}
	return rolloutTimes{total: last.Sub(start), perCluster: fromStart}
}

// serverSpecHash returns the spec hash of cfg as the hub serves it, with the
// API server's defaults: the hash of a dry-run create of a copy, at the
// version the hub hashes AddOnDeploymentConfigs.
func serverSpecHash(ctx context.Context, b *testing.B, hub client.Client, cfg *addonv1alpha1.AddOnDeploymentConfig) string {
	b.Helper()
	beta := &addonv1beta1.AddOnDeploymentConfig{}
	if err := cfg.ConvertTo(beta); err != nil {
		b.Fatal(err)
	}
	beta.Name += "-dry-run"
	beta.ResourceVersion = ""
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(beta)
	if err != nil {
		b.Fatal(err)
	}
	probe := &unstructured.Unstructured{Object: content}
	probe.SetAPIVersion(addonv1beta1.GroupVersion.String())
	probe.SetKind("AddOnDeploymentConfig")
	if err := hub.Create(ctx, probe, client.DryRunAll); err != nil {
		b.Fatalf("dry-run create of an AddOnDeploymentConfig: %v", err)
	}
	hash, err := addonconfig.SpecHash(probe)
	if err != nil {
		b.Fatal(err)
	}
	return hash
}

// setDefaultConfig makes the benchmark's AddOnDeploymentConfig the default
// configuration of its kind on the add-on's ClusterManagementAddOn.
func (af *addonFleet) setDefaultConfig(ctx context.Context) error {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := af.HubClient.Get(ctx, client.ObjectKey{Name: addonName}, cma); err != nil {
		return err
	}
	found := false
	// The add-on manager writes the ClusterManagementAddOn's status too.
	err := benchkit.Update(ctx, af.HubClient, cma, func() {
		for i := range cma.Spec.SupportedConfigs {
			sc := &cma.Spec.SupportedConfigs[i]
			if sc.Group == addonv1alpha1.GroupVersion.Group && sc.Resource == addonv1alpha1.AddOnDeploymentConfigResource {
				sc.DefaultConfig = &addonv1alpha1.ConfigReferent{Namespace: configNamespace, Name: configName}
				found = true
			}
		}
	})
	if err != nil || found {
		return err
	}
	return fmt.Errorf("ClusterManagementAddOn %s does not list %s among its supportedConfigs", addonName, addonv1alpha1.AddOnDeploymentConfigResource)
}

// nodeSelectorConfig is the benchmark's AddOnDeploymentConfig in its round:
// a node selector whose value is the round.
func nodeSelectorConfig(round int) *addonv1alpha1.AddOnDeploymentConfig {
	return &addonv1alpha1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: configNamespace, Name: configName},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			NodePlacement: &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{roundLabel: strconv.Itoa(round)}},
		},
	}
}

// rolledOut reports whether mca has rolled out the AddOnDeploymentConfig of
// the benchmark at spec hash: Progressing False Completed, every
// configuration's lastAppliedConfig equal to its desiredConfig, and that
// config's desiredConfig at hash.
func rolledOut(mca *addonv1alpha1.ManagedClusterAddOn, hash string) bool {
	c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != addonv1alpha1.ProgressingReasonCompleted {
		return false
	}
	found := false
	for _, ref := range mca.Status.ConfigReferences {
		if ref.DesiredConfig == nil || ref.LastAppliedConfig == nil || *ref.DesiredConfig != *ref.LastAppliedConfig {
			return false
		}
		want := addonv1alpha1.ConfigReferent{Namespace: configNamespace, Name: configName}
		if ref.Resource == addonv1alpha1.AddOnDeploymentConfigResource && ref.DesiredConfig.ConfigReferent == want && ref.DesiredConfig.SpecHash == hash {
			found = true
		}
	}
	return found
}
