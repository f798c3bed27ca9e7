package sigdecision

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
)

// source builds a PlacementDecision of the scheduler.
type source struct {
	clusterv1beta1.PlacementDecision
}

// newSource returns PlacementDecision ns/name of placement, in group 0 of
// no name, deciding clusters.
func newSource(ns, name, placement string, clusters ...string) *source {
	s := &source{clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID(name + "-uid"),
		Labels: map[string]string{
			clusterv1beta1.PlacementLabel:          placement,
			clusterv1beta1.DecisionGroupIndexLabel: "0",
			clusterv1beta1.DecisionGroupNameLabel:  "",
		},
	}}}
	for _, c := range clusters {
		s.Status.Decisions = append(s.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "chosen " + c})
	}
	return s
}

// label sets label k to v, or removes it when v is nil.
func (s *source) label(k string, v *string) *source {
	if v == nil {
		delete(s.Labels, k)
	} else {
		s.Labels[k] = *v
	}
	return s
}

func (s *source) obj() *clusterv1beta1.PlacementDecision { return &s.PlacementDecision }

func TestMirror(t *testing.T) {
	src := newSource("team-a", "web-decision-2", "web", "c2", "c1").
		label(clusterv1beta1.DecisionGroupIndexLabel, ptr.To("1")).
		label(clusterv1beta1.DecisionGroupNameLabel, ptr.To("canary")).obj()
	got := Mirror(src)
	want := &multiclusterv1alpha1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: "web-decision-2",
			Labels: map[string]string{
				"x-k8s.io/cluster-manager":                                "open-cluster-management",
				"multicluster.x-k8s.io/placement-key":                     "web",
				"multicluster.x-k8s.io/decision-key":                      "web",
				"multicluster.x-k8s.io/decision-index":                    "1",
				"cluster.open-cluster-management.io/decision-group-index": "1",
				"cluster.open-cluster-management.io/decision-group-name":  "canary",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "PlacementDecision",
				Name: "web-decision-2", UID: "web-decision-2-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Decisions: []multiclusterv1alpha1.ClusterDecision{
			{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "c2", Namespace: "team-a"}, Reason: "chosen c2"},
			{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "c1", Namespace: "team-a"}, Reason: "chosen c1"},
		},
		SchedulerName: "open-cluster-management",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Mirror() =\n%+v\nwant\n%+v", got, want)
	}
	if !IsManaged(got) || !IsMirror(got) {
		t.Errorf("IsManaged, IsMirror of a mirror = %t, %t; want true", IsManaged(got), IsMirror(got))
	}
}

func TestMirrorOfAnEmptyDecision(t *testing.T) {
	got := Mirror(newSource("ns", "web-decision-1", "web").obj())
	if got.Decisions == nil || len(got.Decisions) != 0 {
		t.Errorf("decisions = %#v, want an empty list (the field is required)", got.Decisions)
	}
}

func TestLabels(t *testing.T) {
	tests := []struct {
		name string
		src  *source
		want map[string]string
	}{{
		name: "the first slice",
		src:  newSource("ns", "web-decision-1", "web"),
		want: map[string]string{"multicluster.x-k8s.io/decision-index": "0", "cluster.open-cluster-management.io/decision-group-index": "0", "cluster.open-cluster-management.io/decision-group-name": ""},
	}, {
		name: "the twelfth slice",
		src:  newSource("ns", "web-decision-12", "web"),
		want: map[string]string{"multicluster.x-k8s.io/decision-index": "11", "cluster.open-cluster-management.io/decision-group-index": "0", "cluster.open-cluster-management.io/decision-group-name": ""},
	}, {
		name: "a name the scheduler does not write has no slice index",
		src:  newSource("ns", "manual", "web"),
		want: map[string]string{"cluster.open-cluster-management.io/decision-group-index": "0", "cluster.open-cluster-management.io/decision-group-name": ""},
	}, {
		name: "nor a number with a leading zero",
		src:  newSource("ns", "web-decision-01", "web"),
		want: map[string]string{"cluster.open-cluster-management.io/decision-group-index": "0", "cluster.open-cluster-management.io/decision-group-name": ""},
	}, {
		name: "slice zero does not exist",
		src:  newSource("ns", "web-decision-0", "web"),
		want: map[string]string{"cluster.open-cluster-management.io/decision-group-index": "0", "cluster.open-cluster-management.io/decision-group-name": ""},
	}, {
		name: "a negative group index drops the group labels",
		src:  newSource("ns", "web-decision-1", "web").label(clusterv1beta1.DecisionGroupIndexLabel, ptr.To("-1")),
		want: map[string]string{"multicluster.x-k8s.io/decision-index": "0"},
	}, {
		name: "so does a group index that is no number",
		src:  newSource("ns", "web-decision-1", "web").label(clusterv1beta1.DecisionGroupIndexLabel, ptr.To("x")),
		want: map[string]string{"multicluster.x-k8s.io/decision-index": "0"},
	}, {
		name: "without a placement label there is no placement or decision key",
		src:  newSource("ns", "web-decision-1", "").label(clusterv1beta1.PlacementLabel, nil).label(clusterv1beta1.DecisionGroupIndexLabel, nil),
		want: map[string]string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := map[string]string{"x-k8s.io/cluster-manager": SchedulerName}
			if p := tt.src.Labels[clusterv1beta1.PlacementLabel]; p != "" {
				want["multicluster.x-k8s.io/placement-key"] = p
				want["multicluster.x-k8s.io/decision-key"] = p
			}
			for k, v := range tt.want {
				want[k] = v
			}
			if got := Labels(tt.src.obj()); !reflect.DeepEqual(got, want) {
				t.Errorf("Labels() = %v, want %v", got, want)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	want := Mirror(newSource("ns", "manual", "web", "c1").obj())
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}
	cur := &multiclusterv1alpha1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "manual",
			Labels: map[string]string{
				multiclusterv1alpha1.LabelClusterManagerKey: SchedulerName,
				multiclusterv1alpha1.DecisionIndexLabel:     "3",
				"team":                                      "a",
			},
			OwnerReferences: []metav1.OwnerReference{other, {
				APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "PlacementDecision",
				Name: "manual", UID: "old-uid", Controller: ptr.To(true),
			}},
		},
		Decisions:     []multiclusterv1alpha1.ClusterDecision{{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "c9"}}},
		SchedulerName: "someone",
	}
	Update(cur, want)
	wantLabels := map[string]string{"team": "a"}
	for k, v := range want.Labels {
		wantLabels[k] = v
	}
	if !reflect.DeepEqual(cur.Labels, wantLabels) {
		t.Errorf("labels = %v, want the source's (no slice index: the name is not the scheduler's) and the user's team=a", cur.Labels)
	}
	if wantOwners := append([]metav1.OwnerReference{other}, want.OwnerReferences...); !reflect.DeepEqual(cur.OwnerReferences, wantOwners) {
		t.Errorf("owner references = %+v, want the ConfigMap's kept and the controller replaced by %+v", cur.OwnerReferences, want.OwnerReferences)
	}
	if !reflect.DeepEqual(cur.Decisions, want.Decisions) || cur.SchedulerName != SchedulerName {
		t.Errorf("decisions, scheduler = %+v, %q; want %+v, %q", cur.Decisions, cur.SchedulerName, want.Decisions, SchedulerName)
	}
}

func TestIsMirror(t *testing.T) {
	mirror := Mirror(newSource("ns", "web-decision-1", "web").obj())
	foreign := mirror.DeepCopy()
	foreign.Labels[multiclusterv1alpha1.LabelClusterManagerKey] = "other"
	unowned := mirror.DeepCopy()
	unowned.OwnerReferences = nil
	for name, tt := range map[string]struct {
		pd   *multiclusterv1alpha1.PlacementDecision
		want bool
	}{"a mirror": {mirror, true}, "another cluster manager's": {foreign, false}, "one without its source": {unowned, false}} {
		if got := IsMirror(tt.pd); got != tt.want {
			t.Errorf("IsMirror(%s) = %t, want %t", name, got, tt.want)
		}
	}
}
