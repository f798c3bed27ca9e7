package work

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

func TestCreateValidatePlacement(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	valid := func() *CreateOptions {
		o := NewCreateOptions(nil, streams)
		o.Name, o.Filenames = "web", []string{"app.yaml"}
		o.Rollout = RolloutFlags{Placement: "apps/web", PlacementNamespace: "apps", PlacementName: "web", Type: "All"}
		return o
	}
	tests := []struct {
		name    string
		mutate  func(o *CreateOptions)
		wantErr string
	}{
		{"placement", func(*CreateOptions) {}, ""},
		{"placement and replicaset", func(o *CreateOptions) { o.Rollout.ReplicaSet = true }, ""},
		{"progressive", func(o *CreateOptions) {
			o.Rollout.Type, o.Rollout.MaxConcurrency, o.Rollout.MaxFailures, o.Rollout.ProgressDeadline = "Progressive", "25%", "2", "10m"
		}, ""},
		{"progress deadline None", func(o *CreateOptions) { o.Rollout.ProgressDeadline = "None" }, ""},
		{"placement and clusters", func(o *CreateOptions) { o.Clusters = []string{"cluster1"} }, "--clusters and --placement exclude each other"},
		{"placement without name", func(o *CreateOptions) { o.Rollout.Placement, o.Rollout.PlacementName = "apps/", "" }, `--placement "apps/": write NAMESPACE/NAME`},
		{"placement with two slashes", func(o *CreateOptions) { o.Rollout.Placement = "a/b/c" }, "write NAMESPACE/NAME"},
		{"bad rollout", func(o *CreateOptions) { o.Rollout.Type = "Canary" }, `--rollout "Canary" is not supported: use one of All, Progressive, ProgressivePerGroup`},
		{"max concurrency needs Progressive", func(o *CreateOptions) { o.Rollout.MaxConcurrency = "2" }, "--max-concurrency applies to --rollout Progressive only"},
		{"bad max concurrency", func(o *CreateOptions) { o.Rollout.Type, o.Rollout.MaxConcurrency = "Progressive", "150%" }, `--max-concurrency "150%"`},
		{"zero max concurrency", func(o *CreateOptions) { o.Rollout.Type, o.Rollout.MaxConcurrency = "Progressive", "0" }, "at least 1"},
		{"bad max failures", func(o *CreateOptions) { o.Rollout.MaxFailures = "some" }, `--max-failures "some"`},
		{"negative soak", func(o *CreateOptions) { o.Rollout.MinSuccessTime = -time.Second }, "--min-success-time -1s must not be negative"},
		{"bad deadline", func(o *CreateOptions) { o.Rollout.ProgressDeadline = "10ms" }, `--progress-deadline "10ms"`},
		{"gates", func(o *CreateOptions) {
			o.Rollout.Type, o.Rollout.Gates, o.Rollout.StageSize, o.Rollout.FailureStrategy = "Progressive", "Before,After", 2, "Rollback"
		}, ""},
		{"gates need stages", func(o *CreateOptions) { o.Rollout.Gates = "Before" }, "--gates needs --rollout Progressive or ProgressivePerGroup"},
		{"bad gates", func(o *CreateOptions) { o.Rollout.Type, o.Rollout.Gates = "ProgressivePerGroup", "Later" }, `--gates "Later": give Before, After or Before,After`},
		{"stage size needs Progressive", func(o *CreateOptions) { o.Rollout.Type, o.Rollout.StageSize = "ProgressivePerGroup", 2 }, "--stage-size applies to --rollout Progressive only"},
		{"bad failure strategy", func(o *CreateOptions) { o.Rollout.FailureStrategy = "Retry" }, `--failure-strategy "Retry": give Abort or Rollback`},
		{"name longer than a label value", func(o *CreateOptions) { o.Name = strings.Repeat("w", 60) }, ""},
		{"no placement nor clusters", func(o *CreateOptions) { o.Rollout = RolloutFlags{Type: "All"} }, "use --clusters a,b"},
		{"rollout flags without placement", func(o *CreateOptions) {
			o.Rollout = RolloutFlags{Type: "All", changed: []string{"replicaset"}}
			o.Clusters = []string{"cluster1"}
		}, "--replicaset needs --placement NAMESPACE/NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.mutate(o)
			err := o.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestRolloutStrategy(t *testing.T) {
	tests := []struct {
		name string
		r    RolloutFlags
		want clusterv1alpha1.RolloutStrategy
	}{
		{"all", RolloutFlags{Type: "All"}, clusterv1alpha1.RolloutStrategy{Type: "All"}},
		{"all with deadline", RolloutFlags{Type: "All", ProgressDeadline: "5m"}, clusterv1alpha1.RolloutStrategy{Type: "All",
			All: &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "5m"}}}},
		{"progressive", RolloutFlags{Type: "Progressive", MaxConcurrency: "25%", MaxFailures: "1", MinSuccessTime: time.Minute},
			clusterv1alpha1.RolloutStrategy{Type: "Progressive", Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromString("25%"),
				RolloutConfig:  clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(1), MinSuccessTime: metav1.Duration{Duration: time.Minute}},
			}}},
		{"per group", RolloutFlags{Type: "ProgressivePerGroup", MaxFailures: "10%"}, clusterv1alpha1.RolloutStrategy{Type: "ProgressivePerGroup",
			ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromString("10%")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Strategy(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Strategy() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBuildReplicaSet(t *testing.T) {
	m := cli.Manifest{Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "default"}}}}
	// Unset rollout settings stay out of the applied object, so that the
	// hub's defaults apply (maxConcurrency 0 would stall the rollout).
	tests := []struct {
		name    string
		rollout RolloutFlags
		want    map[string]any
	}{
		{"all", RolloutFlags{Type: "All"}, map[string]any{"type": "All"}},
		{"progressive with max concurrency", RolloutFlags{Type: "Progressive", MaxConcurrency: "2"},
			map[string]any{"type": "Progressive", "progressive": map[string]any{"maxConcurrency": int64(2)}}},
		{"progressive without max concurrency", RolloutFlags{Type: "Progressive", MaxFailures: "10%"},
			map[string]any{"type": "Progressive", "progressive": map[string]any{"maxFailures": "10%"}}},
		{"per group with soak time", RolloutFlags{Type: "ProgressivePerGroup", MinSuccessTime: time.Minute, ProgressDeadline: "10m"},
			map[string]any{"type": "ProgressivePerGroup", "progressivePerGroup": map[string]any{"minSuccessTime": "1m0s", "progressDeadline": "10m"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mwrs, err := cli.ToUnstructured(BuildReplicaSet("web", "apps", "prod", tt.rollout.Strategy(), []cli.Manifest{m}, "CreateOnly", nil))
			if err != nil {
				t.Fatal(err)
			}
			if mwrs.GetKind() != "ManifestWorkReplicaSet" || mwrs.GetNamespace() != "apps" || mwrs.GetName() != "web" {
				t.Errorf("object = %s %s/%s", mwrs.GetKind(), mwrs.GetNamespace(), mwrs.GetName())
			}
			refs, _, _ := unstructured.NestedSlice(mwrs.Object, "spec", "placementRefs")
			want := []any{map[string]any{"name": "prod", "rolloutStrategy": tt.want}}
			if !reflect.DeepEqual(refs, want) {
				t.Errorf("placementRefs = %#v, want %#v", refs, want)
			}
			manifests, _, _ := unstructured.NestedSlice(mwrs.Object, "spec", "manifestWorkTemplate", "workload", "manifests")
			configs, _, _ := unstructured.NestedSlice(mwrs.Object, "spec", "manifestWorkTemplate", "manifestConfigs")
			if len(manifests) != 1 || len(configs) != 1 {
				t.Errorf("template has %d manifests and %d configs, want 1 and 1", len(manifests), len(configs))
			}
			if _, found := mwrs.Object["status"]; found {
				t.Error("the applied object has a status")
			}
		})
	}
}

// mwrsWork is a work of ManifestWorkReplicaSet apps.web in cluster at
// generation 2 with the given conditions.
func mwrsWork(cluster string, conds ...metav1.Condition) workv1.ManifestWork {
	return workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: cluster, Generation: 2, Labels: map[string]string{
			workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "apps.web", workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey: "prod"}},
		Status: workv1.ManifestWorkStatus{Conditions: conds},
	}
}

// gen returns a condition observed at generation g.
func gen(typ string, status metav1.ConditionStatus, g int64, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, ObservedGeneration: g, Reason: "R", Message: message}
}

func TestClusterStatesTable(t *testing.T) {
	works := []workv1.ManifestWork{
		mwrsWork("c1", gen(workv1.WorkApplied, "True", 2, ""), gen(workv1.WorkAvailable, "True", 2, "")),
		mwrsWork("c2", gen(workv1.WorkApplied, "True", 1, ""), gen(workv1.WorkAvailable, "True", 1, "")),
		mwrsWork("c3", gen(workv1.WorkApplied, "False", 2, "apply failed: forbidden")),
		mwrsWork("c4", gen(workv1.WorkApplied, "True", 2, ""), gen(workv1.WorkDegraded, "True", 2, "2 manifests degraded")),
		mwrsWork("c5"),
		mwrsWork("c6", gen(workv1.WorkApplied, "True", 2, ""), gen(workv1.WorkAvailable, "False", 2, "Deployment web not found")),
	}
	works[0].Annotations = map[string]string{revision.HashAnnotation: "h2"}
	works[1].Annotations = map[string]string{revision.HashAnnotation: "h1"}
	works[2].Annotations = map[string]string{revision.HashAnnotation: "gone"}
	decided := map[string]string{"c1": "prod", "c7": "prod"}
	var out bytes.Buffer
	if err := printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(ClusterStatesTable(works, decided, map[string]int64{"h1": 1, "h2": 2}), &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"CLUSTER PLACEMENT REVISION APPLIED AVAILABLE STATE MESSAGE",
		"c1 prod 2 True True Succeeded",
		"c2 prod 1 True True Progressing waiting for the work agent to apply generation 2",
		"c3 prod False Failed apply failed: forbidden",
		"c4 prod True Failed 2 manifests degraded",
		"c5 prod Progressing waiting for the cluster's work agent to apply the work",
		"c6 prod True False Progressing Deployment web not found",
		"c7 prod ToApply decided, the work is not created yet",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReplicaSetsTable(t *testing.T) {
	s := workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{
			{Name: "prod", RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: "Progressive"}}, {Name: "dev"}}},
		Status: workv1alpha1.ManifestWorkReplicaSetStatus{
			Summary:    workv1alpha1.ManifestWorkReplicaSetSummary{Total: 5, Applied: 4, Available: 3, Degraded: 1},
			Conditions: []metav1.Condition{{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, Status: "False", Reason: "Progressing"}},
		},
	}
	var out bytes.Buffer
	if err := printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(ReplicaSetsTable([]workv1alpha1.ManifestWorkReplicaSet{s}, now), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got, want := strings.Join(strings.Fields(lines[1]), " "), "web prod(Progressive),dev(All) 5 4 3 1 Progressing 60m"; got != want {
		t.Errorf("row = %q, want %q (header %q)", got, want, lines[0])
	}
}

func TestGetDeleteValidateReplicaSet(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	tests := []struct {
		name    string
		o       interface{ Validate() error }
		wantErr string
	}{
		{"get all namespaces", &GetOptions{ReplicaSet: true, AllNamespaces: true, PrintFlags: NewGetOptions(nil, streams).PrintFlags}, ""},
		{"get with --clusters", &GetOptions{ReplicaSet: true, Clusters: []string{"c1"}, PrintFlags: NewGetOptions(nil, streams).PrintFlags}, "--clusters does not apply to --replicaset"},
		{"get name with -A", &GetOptions{ReplicaSet: true, Name: "web", AllNamespaces: true, PrintFlags: NewGetOptions(nil, streams).PrintFlags}, "NAME and --all-namespaces (-A) exclude each other"},
		{"delete", &DeleteOptions{ReplicaSet: true, Name: "web", Namespace: "apps", Timeout: time.Minute}, ""},
		{"delete with clusters", &DeleteOptions{ReplicaSet: true, Name: "web", Clusters: []string{"c1"}, Timeout: time.Minute}, "--clusters and --replicaset exclude each other"},
		{"delete works needs clusters", &DeleteOptions{Name: "web", Timeout: time.Minute}, "use --clusters a,b"},
		{"delete dry run", &DeleteOptions{Name: "web", Clusters: []string{"c1"}, Timeout: time.Minute, DryRun: cli.DryRunServer}, ""},
		{"delete dry run and wait", &DeleteOptions{Name: "web", Clusters: []string{"c1"}, Timeout: time.Minute, DryRun: cli.DryRunClient, Wait: true}, "--wait and --dry-run exclude each other"},
		{"delete unknown dry run", &DeleteOptions{Name: "web", Clusters: []string{"c1"}, Timeout: time.Minute, DryRun: "yes"}, "--dry-run yes is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}
