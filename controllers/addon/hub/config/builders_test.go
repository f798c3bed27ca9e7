package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

var (
	now  = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	adc  = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}
	ex   = addonv1alpha1.ConfigGroupResource{Group: "example.open-cluster-management.io", Resource: "exampleconfigs"}
	tmpl = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addontemplates"}
)

// key is the key of a configuration in namespace ocm.
func key(gr addonv1alpha1.ConfigGroupResource, name string) addonconfig.Key {
	return addonconfig.Key{ConfigGroupResource: gr, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ocm", Name: name}}
}

// ref is the reference to a configuration in namespace ocm.
func ref(gr addonv1alpha1.ConfigGroupResource, name string) addonv1alpha1.AddOnConfig {
	return addonv1alpha1.AddOnConfig{ConfigGroupResource: gr, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ocm", Name: name}}
}

// hashed is a desired or applied configuration in namespace ocm.
func hashed(name, hash string) *addonv1alpha1.ConfigSpecHash {
	return &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ocm", Name: name}, SpecHash: hash}
}

// cmaWith builds the ClusterManagementAddOn helloworld supporting the
// AddOnDeploymentConfig default-deploy-config, installed by placements.
func cmaWith(placements ...addonv1alpha1.PlacementStrategy) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "helloworld"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{ConfigGroupResource: adc,
				DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: "ocm", Name: "default-deploy-config"}}},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements, Placements: placements},
		},
	}
}

// placementStrategy is the install placement default/name with configs.
func placementStrategy(name string, strategy clusterv1alpha1.RolloutStrategy, configs ...addonv1alpha1.AddOnConfig) addonv1alpha1.PlacementStrategy {
	return addonv1alpha1.PlacementStrategy{
		PlacementRef: addonv1alpha1.PlacementRef{Namespace: "default", Name: name}, Configs: configs, RolloutStrategy: strategy,
	}
}

// progressive is a Progressive strategy with maxConcurrency and mandatory groups by name.
func progressive(maxConcurrency int32, mandatory ...string) clusterv1alpha1.RolloutStrategy {
	s := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		MaxConcurrency: intstr.FromInt32(maxConcurrency),
	}}
	for _, m := range mandatory {
		s.Progressive.MandatoryDecisionGroups.MandatoryDecisionGroups = append(s.Progressive.MandatoryDecisionGroups.MandatoryDecisionGroups,
			clusterv1alpha1.MandatoryDecisionGroup{GroupName: m})
	}
	return s
}

// decided is a found placement's decisions, one group per list.
func decided(groups ...[]string) lookup.Decisions {
	d := lookup.Decisions{Found: true}
	for i, g := range groups {
		d.Groups = append(d.Groups, rollout.Group{Index: int32(i), Name: []string{"canary", "rest", "last"}[i], Clusters: g})
	}
	return d
}

// mcaOpt changes a ManagedClusterAddOn built by mca.
type mcaOpt func(*addonv1alpha1.ManagedClusterAddOn)

// mca builds the ManagedClusterAddOn helloworld of cluster.
func mca(cluster string, opts ...mcaOpt) addonv1alpha1.ManagedClusterAddOn {
	m := addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "helloworld", Namespace: cluster,
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// running gives the add-on the AddOnDeploymentConfig name (hash) as desired
// configuration, applied when applied is set, with a Progressing condition
// of reason since d ago.
func running(name, hash string, applied bool, reason string, d time.Duration) mcaOpt {
	return func(m *addonv1alpha1.ManagedClusterAddOn) {
		r := addonv1alpha1.ConfigReference{ConfigGroupResource: adc, ConfigReferent: hashed(name, hash).ConfigReferent, DesiredConfig: hashed(name, hash)}
		if applied {
			r.LastAppliedConfig = hashed(name, hash)
		}
		m.Status.ConfigReferences = []addonv1alpha1.ConfigReference{r}
		status := metav1.ConditionFalse
		if reason == addonv1alpha1.ProgressingReasonProgressing {
			status = metav1.ConditionTrue
		}
		m.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: status,
			Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-d))}}
	}
}
