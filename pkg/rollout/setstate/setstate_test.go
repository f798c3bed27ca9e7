package setstate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// The fixtures: ManifestWorkReplicaSet apps/web at revision 2, rolled out
// through Placement "all".
const (
	setNamespace = "apps"
	setName      = "web"
	placement    = "all"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is what the hub holds for one case.
type fixture struct {
	annotations map[string]string
	strategy    clusterv1alpha1.RolloutStrategy
	// revision is the number of the recorded current revision; 0 records
	// none. staleRevision records it for another template.
	revision      int64
	staleRevision bool
	// groups are the decision groups' clusters, group-0 first.
	groups [][]string
	// works are the clusters' ManifestWorks.
	works []*workv1.ManifestWork
	// approvals are the RolloutApprovals of gates of placement "all".
	approvals []rolloutv1alpha1.RolloutApproval
	// worksForbidden refuses listing ManifestWorks.
	worksForbidden bool
}

// newSet returns apps/web with a ConfigMap template and the fixture's
// annotations and strategy.
func newSet(f fixture) *workv1alpha1.ManifestWorkReplicaSet {
	ann := map[string]string{}
	for k, v := range f.annotations {
		ann[k] = v
	}
	if f.revision > 0 {
		ann[revision.Annotation] = strconv.FormatInt(f.revision, 10)
	}
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: setName, UID: types.UID("set-uid"), Annotations: ann},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"},"data":{"v":"2"}}`)}},
			}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: f.strategy}},
		},
	}
}

// hashOf is the revision hash of set's template.
func hashOf(t *testing.T, set *workv1alpha1.ManifestWorkReplicaSet) string {
	t.Helper()
	_, hash, err := revision.Of(set).Encode()
	require.NoError(t, err)
	return hash
}

// controllerRevision is revision n of set with hash, as the hub controller
// records it.
func controllerRevision(set *workv1alpha1.ManifestWorkReplicaSet, n int64, hash string, created time.Time) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: set.Namespace, Name: revision.Name(set.Name, hash),
			CreationTimestamp: metav1.NewTime(created),
			Labels:            map[string]string{revision.SetLabel: revision.SetLabelValue(set.Name), revision.HashLabel: hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet",
				Name: set.Name, UID: set.UID, Controller: ptr.To(true)}}},
		Revision: n,
	}
}

// decision is the PlacementDecision of one decision group of "all".
func decision(index int, clusters ...string) *clusterv1beta1.PlacementDecision {
	pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: fmt.Sprintf("%s-decision-%d", placement, index),
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement, clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(index)}}}
	for _, c := range clusters {
		pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return pd
}

// hashCurrent stands for the current revision's hash in work's annotation;
// work rewrites it once the set is built.
const hashCurrent = "<current>"

// work is the set's ManifestWork on cluster, written from the revision of
// hash, with conditions of its generation 1 (type=status pairs).
func work(cluster, hash string, conds ...string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: setName, Generation: 1,
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		Labels:            workv1alpha1.OwnerLabels(setNamespace, setName),
		Annotations:       map[string]string{revision.HashAnnotation: hash}}}
	for _, c := range conds {
		typ, status, _ := strings.Cut(c, "=")
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status),
			Reason: "Test", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))})
	}
	return w
}

// done is a work of the current revision, applied and available.
func done(cluster string) *workv1.ManifestWork {
	return work(cluster, hashCurrent, "Applied=True", "Available=True")
}

// approval approves gate of stage of revision rev, by approver.
func approval(rev int64, stage string, gate rollout.GateType, approver string) rolloutv1alpha1.RolloutApproval {
	return rolloutv1alpha1.RolloutApproval{
		ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: fmt.Sprintf("%s-r%d-%s-%s", setName, rev, stage, gate)},
		Spec: rolloutv1alpha1.RolloutApprovalSpec{ManifestWorkReplicaSet: setName, Revision: rev, Placement: placement,
			Stage: stage, Gate: gate, Approver: approver},
	}
}

// hubOf returns a client of a hub holding f.
func hubOf(t *testing.T, f fixture) client.Client {
	t.Helper()
	set := newSet(f)
	objs := []client.Object{set}
	if f.revision > 0 {
		hash := hashOf(t, set)
		if f.staleRevision {
			hash = "0123456789"
		}
		objs = append(objs, controllerRevision(set, f.revision, hash, now.Add(-time.Hour)))
	}
	for i, g := range f.groups {
		objs = append(objs, decision(i, g...))
	}
	for _, w := range f.works {
		w = w.DeepCopy()
		if w.Annotations[revision.HashAnnotation] == hashCurrent {
			w.Annotations[revision.HashAnnotation] = hashOf(t, set)
		}
		objs = append(objs, w)
	}
	for i := range f.approvals {
		objs = append(objs, &f.approvals[i])
	}
	b := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...)
	if f.worksForbidden {
		b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*workv1.ManifestWorkList); ok {
				return apierrors.NewForbidden(schema.GroupResource{Group: workv1.GroupVersion.Group, Resource: "manifestworks"}, "", fmt.Errorf("no"))
			}
			return c.List(ctx, list, opts...)
		}})
	}
	return b.Build()
}

// progressive is a Progressive strategy starting every cluster of a stage.
var progressive = clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
	Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("100%")}}

// stages summarizes r's stages: name, each cluster's state, the counts
// updated/succeeded/failed and the gates.
func stages(r *StatusReport) []string {
	var out []string
	for _, p := range r.Placements {
		for _, s := range p.Stages {
			var cl []string
			for _, c := range s.Clusters {
				cl = append(cl, c.Name+"="+c.State)
			}
			out = append(out, fmt.Sprintf("%s/%s [%s] updated=%d succeeded=%d failed=%d before=%q after=%q",
				p.Name, s.Name, strings.Join(cl, " "), s.Updated, s.Succeeded, s.Failed, s.Before, s.After))
		}
	}
	return out
}

func TestRead(t *testing.T) {
	gatedBefore := map[string]string{rolloutv1alpha1.GatesAnnotation: "Before"}
	tests := []struct {
		name      string
		fixture   fixture
		needWorks bool
		// wantErr and wantPending describe a failed read.
		wantErr     string
		wantPending bool
		wantState   string
		wantMessage string
		// wantWaiting is the gate "all" waits at; wantError its error.
		wantWaiting string
		wantError   string
		wantStages  []string
		wantHidden  bool
	}{
		{
			name:        "no revision recorded yet",
			fixture:     fixture{groups: [][]string{{"c1"}}},
			wantPending: true,
		},
		{
			name:        "the recorded revision is of an earlier template",
			fixture:     fixture{revision: 2, staleRevision: true, groups: [][]string{{"c1"}}},
			wantPending: true,
		},
		{
			name:        "every cluster applied and available: complete",
			fixture:     fixture{revision: 2, groups: [][]string{{"c1", "c2"}}, works: []*workv1.ManifestWork{done("c1"), done("c2")}},
			wantState:   workv1alpha1.ReasonComplete,
			wantMessage: "every cluster runs revision 2",
			wantStages:  []string{`all/group-0 [c1=Succeeded c2=Succeeded] updated=2 succeeded=2 failed=0 before="" after=""`},
		},
		{
			name:       "a cluster still on the previous revision: progressing",
			fixture:    fixture{revision: 2, groups: [][]string{{"c1", "c2"}}, works: []*workv1.ManifestWork{done("c1"), work("c2", "old", "Applied=True", "Available=True")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Succeeded c2=ToApply] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name:       "a cluster without its work: progressing",
			fixture:    fixture{revision: 2, groups: [][]string{{"c1", "c2"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Succeeded c2=ToApply] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name: "applied but not available yet, and one not applied: progressing and failed",
			fixture: fixture{revision: 2, groups: [][]string{{"c1", "c2"}},
				works: []*workv1.ManifestWork{work("c1", hashCurrent, "Applied=True"), work("c2", hashCurrent, "Applied=False")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Progressing c2=Failed] updated=2 succeeded=0 failed=1 before="" after=""`},
		},
		{
			name: "progressing and degraded: failed",
			fixture: fixture{revision: 2, groups: [][]string{{"c1"}},
				works: []*workv1.ManifestWork{work("c1", hashCurrent, "Applied=True", "Available=True", "Progressing=True", "Degraded=True")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Failed] updated=1 succeeded=0 failed=1 before="" after=""`},
		},
		{
			name: "a health condition no manifest reports: progressing",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.HealthConditionAnnotation: "Healthy"},
				groups: [][]string{{"c1"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Progressing] updated=1 succeeded=0 failed=0 before="" after=""`},
		},
		{
			name:        "gated before each stage, nothing approved: awaiting approval",
			fixture:     fixture{revision: 2, annotations: gatedBefore, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}}},
			wantState:   rolloutv1alpha1.ReasonAwaitingApproval,
			wantMessage: "placement all waits for approval before stage group-0",
			wantWaiting: "before stage group-0",
			wantStages: []string{
				`all/group-0 [c1=ToApply] updated=0 succeeded=0 failed=0 before="Waiting" after=""`,
				`all/group-1 [c2=ToApply] updated=0 succeeded=0 failed=0 before="Closed" after=""`,
			},
		},
		{
			name: "the first stage approved and done: awaiting the second",
			fixture: fixture{revision: 2, annotations: gatedBefore, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}},
				works: []*workv1.ManifestWork{done("c1")}, approvals: []rolloutv1alpha1.RolloutApproval{approval(2, "group-0", rollout.GateBefore, "alice")}},
			wantState:   rolloutv1alpha1.ReasonAwaitingApproval,
			wantMessage: "placement all waits for approval before stage group-1",
			wantWaiting: "before stage group-1",
			wantStages: []string{
				`all/group-0 [c1=Succeeded] updated=1 succeeded=1 failed=0 before="Approved by alice" after=""`,
				`all/group-1 [c2=ToApply] updated=0 succeeded=0 failed=0 before="Waiting" after=""`,
			},
		},
		{
			name: "an approval of the previous revision opens no gate",
			fixture: fixture{revision: 2, annotations: gatedBefore, strategy: progressive, groups: [][]string{{"c1"}},
				approvals: []rolloutv1alpha1.RolloutApproval{approval(1, "group-0", rollout.GateBefore, "alice")}},
			wantState:   rolloutv1alpha1.ReasonAwaitingApproval,
			wantMessage: "placement all waits for approval before stage group-0",
			wantWaiting: "before stage group-0",
			wantStages:  []string{`all/group-0 [c1=ToApply] updated=0 succeeded=0 failed=0 before="Waiting" after=""`},
		},
		{
			name: "every stage approved and done: complete",
			fixture: fixture{revision: 2, annotations: gatedBefore, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}},
				works: []*workv1.ManifestWork{done("c1"), done("c2")},
				approvals: []rolloutv1alpha1.RolloutApproval{approval(2, "group-0", rollout.GateBefore, "alice"),
					approval(2, "group-1", rollout.GateBefore, "bob")}},
			wantState:   workv1alpha1.ReasonComplete,
			wantMessage: "every cluster runs revision 2",
			wantStages: []string{
				`all/group-0 [c1=Succeeded] updated=1 succeeded=1 failed=0 before="Approved by alice" after=""`,
				`all/group-1 [c2=Succeeded] updated=1 succeeded=1 failed=0 before="Approved by bob" after=""`,
			},
		},
		{
			name: "paused before it completes: paused, its gate closed rather than waiting",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.GatesAnnotation: "Before", rolloutv1alpha1.PausedAnnotation: "true"},
				strategy: progressive, groups: [][]string{{"c1"}}},
			wantState:   rolloutv1alpha1.ReasonPaused,
			wantMessage: "no further cluster is started until it is resumed",
			wantStages:  []string{`all/group-0 [c1=ToApply] updated=0 succeeded=0 failed=0 before="Closed" after=""`},
		},
		{
			name: "paused once complete: complete",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.PausedAnnotation: "true"},
				groups: [][]string{{"c1"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:   workv1alpha1.ReasonComplete,
			wantMessage: "every cluster runs revision 2",
			wantStages:  []string{`all/group-0 [c1=Succeeded] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name: "the current revision aborted: aborted, over paused",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.AbortedAnnotation: "2", rolloutv1alpha1.PausedAnnotation: "true"},
				groups: [][]string{{"c1", "c2"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:   rolloutv1alpha1.ReasonAborted,
			wantMessage: "no further cluster is started",
			wantStages:  []string{`all/group-0 [c1=Succeeded c2=ToApply] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name: "an earlier revision aborted: progressing",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.AbortedAnnotation: "1"},
				groups: [][]string{{"c1", "c2"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:  workv1alpha1.ReasonProgressing,
			wantStages: []string{`all/group-0 [c1=Succeeded c2=ToApply] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name: "a malformed annotation: invalid, naming it",
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.GatesAnnotation: "Sometimes"},
				groups: [][]string{{"c1"}}, works: []*workv1.ManifestWork{done("c1")}},
			wantState:   workv1alpha1.ReasonInvalidRolloutStrategy,
			wantMessage: `annotation rollout.kubectl-ocm.io/gates="Sometimes": must be Before, After or Before,After`,
			wantStages:  []string{`all/group-0 [c1=Succeeded] updated=1 succeeded=1 failed=0 before="" after=""`},
		},
		{
			name:        "gates on a strategy that starts every cluster at once: invalid, per placement",
			fixture:     fixture{revision: 2, annotations: gatedBefore, groups: [][]string{{"c1"}}},
			wantState:   workv1alpha1.ReasonInvalidRolloutStrategy,
			wantMessage: "placement all: " + rollout.ErrGatesNeedStages.Error(),
			wantError:   rollout.ErrGatesNeedStages.Error(),
		},
		{
			name:       "the caller may not list the works: every cluster not started",
			fixture:    fixture{revision: 2, groups: [][]string{{"c1"}}, works: []*workv1.ManifestWork{done("c1")}, worksForbidden: true},
			wantState:  workv1alpha1.ReasonProgressing,
			wantHidden: true,
			wantStages: []string{`all/group-0 [c1=ToApply] updated=0 succeeded=0 failed=0 before="" after=""`},
		},
		{
			name:      "the caller may not list the works, which the state needs",
			fixture:   fixture{revision: 2, groups: [][]string{{"c1"}}, worksForbidden: true},
			needWorks: true,
			wantErr:   "the rollout's state needs the ManifestWorks of apps/web, which you may not list in every namespace",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(t.Context(), hubOf(t, tt.fixture), setNamespace, setName, tt.needWorks, now)
			switch {
			case tt.wantPending:
				require.ErrorIs(t, err, ErrRevisionPending)
				return
			case tt.wantErr != "":
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantHidden, r.WorksHidden, "WorksHidden")
			report := r.Report()
			assert.Equal(t, tt.wantState, report.State, "state")
			assert.Equal(t, tt.wantMessage, report.Message, "message")
			assert.Equal(t, int64(2), report.Revision)
			assert.Equal(t, hashOf(t, newSet(tt.fixture)), report.Hash)
			require.Len(t, report.Placements, 1)
			assert.Equal(t, tt.wantWaiting, report.Placements[0].Waiting, "waiting")
			assert.Equal(t, tt.wantError, report.Placements[0].Error, "placement error")
			assert.Equal(t, tt.wantStages, stages(report))
		})
	}
}

func TestNextGate(t *testing.T) {
	both := map[string]string{rolloutv1alpha1.GatesAnnotation: "Before,After"}
	tests := []struct {
		name      string
		fixture   fixture
		stage     string
		want      rollout.GateType
		wantAfter string
	}{
		{name: "the gate the rollout waits at", stage: "group-0", want: rollout.GateBefore,
			fixture: fixture{revision: 2, annotations: both, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}}}},
		{name: "a later stage's first gate", stage: "group-1", want: rollout.GateBefore,
			fixture: fixture{revision: 2, annotations: both, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}}}},
		{name: "its After gate once Before is approved", stage: "group-1", want: rollout.GateAfter,
			fixture: fixture{revision: 2, annotations: both, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}},
				approvals: []rolloutv1alpha1.RolloutApproval{approval(2, "group-1", rollout.GateBefore, "alice")}}},
		{name: "the After gate a finished stage waits at", stage: "group-0", want: rollout.GateAfter, wantAfter: "Waiting",
			fixture: fixture{revision: 2, annotations: both, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}},
				works: []*workv1.ManifestWork{done("c1")}, approvals: []rolloutv1alpha1.RolloutApproval{approval(2, "group-0", rollout.GateBefore, "alice")}}},
		{name: "only After gates", stage: "group-1", want: rollout.GateAfter,
			fixture: fixture{revision: 2, annotations: map[string]string{rolloutv1alpha1.GatesAnnotation: "After"}, strategy: progressive, groups: [][]string{{"c1"}, {"c2"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(t.Context(), hubOf(t, tt.fixture), setNamespace, setName, false, now)
			require.NoError(t, err)
			require.Len(t, r.Placements, 1)
			assert.Equal(t, tt.want, r.NextGate(r.Placements[0], tt.stage))
			if tt.wantAfter != "" {
				assert.Equal(t, tt.wantAfter, r.Report().Placements[0].Stages[0].After)
			}
		})
	}
}

func TestRevisions(t *testing.T) {
	set := newSet(fixture{revision: 3})
	created := func(n int64) time.Time { return now.Add(time.Duration(n) * time.Hour) }
	other := controllerRevision(set, 9, "9999999999", created(9))
	other.Name, other.OwnerReferences[0].UID = "web-of-another-set", "other-uid"
	objs := []client.Object{set,
		controllerRevision(set, 3, "3333333333", created(3)), controllerRevision(set, 1, "1111111111", created(1)),
		controllerRevision(set, 2, "2222222222", created(2)), other,
		work("c2", "2222222222"), work("c3", "3333333333"), work("c1", "3333333333"),
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).Build()

	revs, err := Revisions(t.Context(), c, setNamespace, setName)
	require.NoError(t, err)
	assert.Equal(t, []RevisionReport{
		{Revision: 1, Hash: "1111111111", Created: created(1)},
		{Revision: 2, Hash: "2222222222", Created: created(2), Clusters: []string{"c2"}},
		{Revision: 3, Hash: "3333333333", Created: created(3), Clusters: []string{"c1", "c3"}, Current: true},
	}, revs, "oldest first, the other set's revision left out, each with the clusters written from it")

	numbers, err := RevisionNumbers(t.Context(), c, set)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"1111111111": 1, "2222222222": 2, "3333333333": 3}, numbers)

	h, err := ReadHistory(t.Context(), c, setNamespace, setName)
	require.NoError(t, err)
	assert.Equal(t, "1, 2, 3", h.Numbers())
	assert.Equal(t, int64(2), h.Find(2).Revision)
	assert.Nil(t, h.Find(9), "another set's revision")

	_, err = Revisions(t.Context(), c, setNamespace, "missing")
	require.ErrorContains(t, err, "ManifestWorkReplicaSet missing not found in namespace apps")
}

func TestRevisionNumbersForbidden(t *testing.T) {
	set := newSet(fixture{})
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(set).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, "", fmt.Errorf("no"))
		}}).Build()
	numbers, err := RevisionNumbers(t.Context(), c, set)
	require.NoError(t, err, "a caller who may not list revisions gets none")
	assert.Nil(t, numbers)
}
