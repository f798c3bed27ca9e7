package crds_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// defaultsCase creates an object (unless it comes from a seed) and reads it
// back as a typed object to check the defaults the API server applied.
type defaultsCase struct {
	name string
	// create is the object to create; empty when a seed created it.
	create string
	// managed creates and reads the object on cluster1 instead of the hub.
	managed bool
	// key and into select the object to read back and its Go type, which may
	// be another version than the one created.
	key  client.ObjectKey
	into client.Object
	// check inspects the object read back.
	check func(t *testing.T, obj client.Object)
}

func testDefaults(ctx context.Context, t *testing.T, cs clusters) {
	tests := []defaultsCase{
		{
			name: "ManagedCluster leaseDurationSeconds defaults to 60 (seed)",
			key:  client.ObjectKey{Name: "cluster1"}, into: &clusterv1.ManagedCluster{},
			check: func(t *testing.T, obj client.Object) {
				if got := obj.(*clusterv1.ManagedCluster).Spec.LeaseDurationSeconds; got != 60 {
					t.Errorf("spec.leaseDurationSeconds = %d, want 60", got)
				}
			},
		},
		{
			name: "v1beta1 ManagedClusterSet reads back at v1beta2 with the exclusive selector (seed)",
			key:  client.ObjectKey{Name: "prod"}, into: &clusterv1beta2.ManagedClusterSet{},
			check: func(t *testing.T, obj client.Object) {
				sel := obj.(*clusterv1beta2.ManagedClusterSet).Spec.ClusterSelector
				if sel.SelectorType != clusterv1beta2.ExclusiveClusterSetLabel {
					t.Errorf("spec.clusterSelector.selectorType = %q, want ExclusiveClusterSetLabel", sel.SelectorType)
				}
			},
		},
		{
			name: "v1beta1 ManagedClusterSet with the legacy selector type reads back at v1beta2 as exclusive",
			create: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: ManagedClusterSet
metadata: {name: legacy}
spec: {clusterSelector: {selectorType: LegacyClusterSetLabel}}`,
			key: client.ObjectKey{Name: "legacy"}, into: &clusterv1beta2.ManagedClusterSet{},
			check: func(t *testing.T, obj client.Object) {
				sel := obj.(*clusterv1beta2.ManagedClusterSet).Spec.ClusterSelector
				if sel.SelectorType != clusterv1beta2.LegacyClusterSetLabel || !sel.IsExclusive() {
					t.Errorf("spec.clusterSelector.selectorType = %q (exclusive %v), want LegacyClusterSetLabel treated as exclusive",
						sel.SelectorType, sel.IsExclusive())
				}
			},
		},
		{
			name: "ManifestWork deleteOption, updateStrategy and feedbackScrapeType",
			create: `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: defaults, namespace: cluster1}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}
  deleteOption: {}
  manifestConfigs:
  - resourceIdentifier: {resource: configmaps, name: cm, namespace: default}
    updateStrategy: {serverSideApply: {}}`,
			key: client.ObjectKey{Namespace: "cluster1", Name: "defaults"}, into: &workv1.ManifestWork{},
			check: func(t *testing.T, obj client.Object) {
				spec := obj.(*workv1.ManifestWork).Spec
				if got := spec.DeleteOption.PropagationPolicy; got != workv1.DeletePropagationPolicyTypeForeground {
					t.Errorf("spec.deleteOption.propagationPolicy = %q, want Foreground", got)
				}
				cfg := spec.ManifestConfigs[0]
				if got := cfg.UpdateStrategy.Type; got != workv1.UpdateStrategyTypeUpdate {
					t.Errorf("updateStrategy.type = %q, want Update", got)
				}
				if got := cfg.UpdateStrategy.ServerSideApply.FieldManager; got != workv1.DefaultFieldManager {
					t.Errorf("updateStrategy.serverSideApply.fieldManager = %q, want work-agent", got)
				}
				if cfg.FeedbackScrapeType != workv1.FeedbackPollType {
					t.Errorf("feedbackScrapeType = %q, want Poll", cfg.FeedbackScrapeType)
				}
			},
		},
		{
			name: "ManifestWorkReplicaSet rollout strategy and cascade deletion policy",
			create: `
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: defaults, namespace: default}
spec:
  manifestWorkTemplate:
    workload:
      manifests:
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}
  placementRefs:
  - name: placement-aws
  - name: progressive
    rolloutStrategy: {type: Progressive, progressive: {}}`,
			key: client.ObjectKey{Namespace: "default", Name: "defaults"}, into: &workv1alpha1.ManifestWorkReplicaSet{},
			check: func(t *testing.T, obj client.Object) {
				spec := obj.(*workv1alpha1.ManifestWorkReplicaSet).Spec
				if spec.CascadeDeletionPolicy != workv1alpha1.Background {
					t.Errorf("spec.cascadeDeletionPolicy = %q, want Background", spec.CascadeDeletionPolicy)
				}
				all := spec.PlacementRefs[0].RolloutStrategy
				if all.Type != clusterv1alpha1.All || all.All == nil || all.All.ProgressDeadline != clusterv1alpha1.ProgressDeadlineNone {
					t.Errorf("placementRefs[0].rolloutStrategy = %+v, want type All with progressDeadline None", all)
				}
				p := spec.PlacementRefs[1].RolloutStrategy.Progressive
				if p == nil || p.ProgressDeadline != "None" || p.MinSuccessTime.Duration != 0 || p.MaxFailures != intstr.FromInt32(0) {
					t.Errorf("placementRefs[1].rolloutStrategy.progressive = %+v, want progressDeadline None, minSuccessTime 0, maxFailures 0", p)
				}
			},
		},
		{
			name: "Placement prioritizer, toleration, spread and decision strategy",
			create: `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: defaults, namespace: default}
spec:
  prioritizerPolicy: {configurations: [{scoreCoordinate: {builtIn: Steady}}]}
  tolerations: [{key: gpu}]
  spreadPolicy: {spreadConstraints: [{topologyKey: zone, topologyKeyType: Label}]}
  decisionStrategy: {groupStrategy: {}}`,
			key: client.ObjectKey{Namespace: "default", Name: "defaults"}, into: &clusterv1beta1.Placement{},
			check: func(t *testing.T, obj client.Object) {
				spec := obj.(*clusterv1beta1.Placement).Spec
				if spec.PrioritizerPolicy.Mode != clusterv1beta1.PrioritizerPolicyModeAdditive {
					t.Errorf("prioritizerPolicy.mode = %q, want Additive", spec.PrioritizerPolicy.Mode)
				}
				pc := spec.PrioritizerPolicy.Configurations[0]
				if pc.Weight != 1 || pc.ScoreCoordinate.Type != clusterv1beta1.ScoreCoordinateTypeBuiltIn {
					t.Errorf("prioritizer configuration = weight %d type %q, want weight 1 type BuiltIn", pc.Weight, pc.ScoreCoordinate.Type)
				}
				if op := spec.Tolerations[0].Operator; op != clusterv1beta1.TolerationOpEqual {
					t.Errorf("tolerations[0].operator = %q, want Equal", op)
				}
				sc := spec.SpreadPolicy.SpreadConstraints[0]
				if sc.MaxSkew != 1 || sc.WhenUnsatisfiable != clusterv1beta1.ScheduleAnyway {
					t.Errorf("spreadConstraints[0] = maxSkew %d whenUnsatisfiable %q, want 1 ScheduleAnyway", sc.MaxSkew, sc.WhenUnsatisfiable)
				}
				if got := spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup; got != intstr.FromString("100%") {
					t.Errorf("clustersPerDecisionGroup = %v, want 100%%", got.String())
				}
			},
		},
		{
			name: "ClusterManagementAddOn install strategy",
			create: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: defaults}
spec: {}`,
			key: client.ObjectKey{Name: "defaults"}, into: &addonv1alpha1.ClusterManagementAddOn{},
			check: func(t *testing.T, obj client.Object) {
				if got := obj.(*addonv1alpha1.ClusterManagementAddOn).Spec.InstallStrategy.Type; got != addonv1alpha1.InstallStrategyManual {
					t.Errorf("spec.installStrategy.type = %q, want Manual", got)
				}
			},
		},
		{
			name: "ClusterManagementAddOn install placement rollout strategy",
			create: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: defaults-placements}
spec: {installStrategy: {type: Placements, placements: [{namespace: default, name: placement-aws}]}}`,
			key: client.ObjectKey{Name: "defaults-placements"}, into: &addonv1alpha1.ClusterManagementAddOn{},
			check: func(t *testing.T, obj client.Object) {
				p := obj.(*addonv1alpha1.ClusterManagementAddOn).Spec.InstallStrategy.Placements[0]
				if p.RolloutStrategy.Type != clusterv1alpha1.All {
					t.Errorf("placements[0].rolloutStrategy.type = %q, want All", p.RolloutStrategy.Type)
				}
			},
		},
		{
			name: "ManagedClusterAddOn install namespace",
			create: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: defaults, namespace: cluster1}
spec: {}`,
			key: client.ObjectKey{Namespace: "cluster1", Name: "defaults"}, into: &addonv1alpha1.ManagedClusterAddOn{},
			check: func(t *testing.T, obj client.Object) {
				//nolint:staticcheck // The deprecated field's schema default is what is tested.
				if got := obj.(*addonv1alpha1.ManagedClusterAddOn).Spec.InstallNamespace; got != addonv1alpha1.DefaultAddonInstallNamespace {
					t.Errorf("spec.installNamespace = %q, want %s", got, addonv1alpha1.DefaultAddonInstallNamespace)
				}
			},
		},
		{
			name: "ClusterManager deploy mode and work driver",
			create: `
apiVersion: operator.open-cluster-management.io/v1
kind: ClusterManager
metadata: {name: cluster-manager}
spec: {registrationConfiguration: {registrationDrivers: [{}]}}`,
			key: client.ObjectKey{Name: "cluster-manager"}, into: &operatorv1.ClusterManager{},
			check: func(t *testing.T, obj client.Object) {
				spec := obj.(*operatorv1.ClusterManager).Spec
				if spec.DeployOption.Mode != operatorv1.InstallModeDefault {
					t.Errorf("spec.deployOption.mode = %q, want Default", spec.DeployOption.Mode)
				}
				if spec.WorkConfiguration == nil || spec.WorkConfiguration.WorkDriver != operatorv1.WorkDriverTypeKube {
					t.Errorf("spec.workConfiguration = %+v, want workDriver kube", spec.WorkConfiguration)
				}
				if got := spec.RegistrationConfiguration.RegistrationDrivers[0].AuthType; got != operatorv1.CSRAuthType {
					t.Errorf("registrationDrivers[0].authType = %q, want csr", got)
				}
			},
		},
		{
			name:    "Klusterlet registration configuration",
			managed: true,
			create: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: klusterlet}
spec: {clusterName: cluster1, registrationConfiguration: {clientCertExpirationSeconds: 0, clusterClaimConfiguration: {}}}`,
			key: client.ObjectKey{Name: "klusterlet"}, into: &operatorv1.Klusterlet{},
			check: func(t *testing.T, obj client.Object) {
				rc := obj.(*operatorv1.Klusterlet).Spec.RegistrationConfiguration
				if rc.KubeAPIQPS != 50 || rc.KubeAPIBurst != 100 || rc.ClusterClaimConfiguration.MaxCustomClusterClaims != 20 {
					t.Errorf("registrationConfiguration = qps %d burst %d maxCustomClusterClaims %d, want 50 100 20",
						rc.KubeAPIQPS, rc.KubeAPIBurst, rc.ClusterClaimConfiguration.MaxCustomClusterClaims)
				}
			},
		},
		{
			// What the reportHostingCluster rules accept: the name the agent
			// reports is there, and ClusterClaim is left enabled.
			name:    "Klusterlet reportHostingCluster with the hosting cluster's name",
			managed: true,
			create: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: klusterlet-cluster2}
spec:
  clusterName: cluster2
  deployOption: {mode: Hosted, reportHostingCluster: Enable, hosted: {managementClusterName: cluster1}}
  registrationConfiguration: {featureGates: [{feature: ClusterClaim, mode: Enable}]}`,
			key: client.ObjectKey{Name: "klusterlet-cluster2"}, into: &operatorv1.Klusterlet{},
			check: func(t *testing.T, obj client.Object) {
				opt := obj.(*operatorv1.Klusterlet).Spec.DeployOption
				if opt.ReportHostingCluster != operatorv1.ReportHostingClusterModeEnable || opt.Hosted == nil || opt.Hosted.ManagementClusterName != "cluster1" {
					t.Errorf("deployOption = %+v, want reportHostingCluster Enable and managementClusterName cluster1", opt)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cs.hub
			if tt.managed {
				c = cs.cluster1
			}
			if tt.create != "" {
				if err := c.Create(ctx, mustDecode(t, tt.create)); err != nil {
					t.Fatalf("create: %v", err)
				}
			}
			if err := c.Get(ctx, tt.key, tt.into); err != nil {
				t.Fatalf("get %T %s: %v", tt.into, tt.key, err)
			}
			tt.check(t, tt.into)
		})
	}
}
