package placement

import (
	"context"
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	placementlib "github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// The namespaces and sets of the event tests: apps is bound to the
// exclusive set "s" and to "elsewhere"; fleet to "global", which selects
// every cluster.
const (
	appsNS  = "apps"
	fleetNS = "fleet"
)

// mcBuilder builds ManagedClusters for the event tests, in set "s".
type mcBuilder struct{ c *clusterv1.ManagedCluster }

// mc starts cluster name in set "s" with labels k=v pairs.
func mc(name string, kv ...string) *mcBuilder {
	l := map[string]string{clusterv1beta2.ClusterSetLabel: "s"}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &mcBuilder{c: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}}
}

func (b *mcBuilder) label(k, v string) *mcBuilder { b.c.Labels[k] = v; return b }
func (b *mcBuilder) unlabel(k string) *mcBuilder  { delete(b.c.Labels, k); return b }
func (b *mcBuilder) claim(k, v string) *mcBuilder {
	b.c.Status.ClusterClaims = append(b.c.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: v})
	return b
}
func (b *mcBuilder) taint(key string) *mcBuilder {
	b.c.Spec.Taints = append(b.c.Spec.Taints, clusterv1.Taint{Key: key, Effect: clusterv1.TaintEffectNoSelect})
	return b
}
func (b *mcBuilder) cpu(q string) *mcBuilder {
	b.c.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse(q)}
	return b
}
func (b *mcBuilder) condition() *mcBuilder {
	b.c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}}
	return b
}
func (b *mcBuilder) deleting() *mcBuilder {
	now := metav1.Now()
	b.c.DeletionTimestamp = &now
	return b
}

func (b *mcBuilder) build() *clusterv1.ManagedCluster { return b.c }

// spec builds a placement spec for the event tests.
type spec struct{ s clusterv1beta1.PlacementSpec }

// byLabel selects the clusters with labels k=v pairs.
func byLabel(kv ...string) *spec {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &spec{clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: m}}}}}}
}

// byClaim selects the clusters whose claim k is one of values.
func byClaim(k string, values ...string) *spec {
	return &spec{clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k, Operator: metav1.LabelSelectorOpIn, Values: values}}}}}}}}
}

// byCEL selects by a CEL expression.
func byCEL(expr string) *spec {
	return &spec{clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{expr}}}}}}}
}

// anyCluster has no predicates.
func anyCluster() *spec { return &spec{} }

func (s *spec) count(n int32) *spec { s.s.NumberOfClusters = ptr.To(n); return s }
func (s *spec) sets(names ...string) *spec {
	s.s.ClusterSets = names
	return s
}
func (s *spec) prioritize(c clusterv1beta1.ScoreCoordinate) *spec {
	s.s.PrioritizerPolicy.Configurations = append(s.s.PrioritizerPolicy.Configurations,
		clusterv1beta1.PrioritizerConfig{Weight: 1, ScoreCoordinate: &c})
	return s
}
func (s *spec) groupsBy(k, v string) *spec {
	s.s.DecisionStrategy.GroupStrategy.DecisionGroups = []clusterv1beta1.DecisionGroup{{GroupName: "canary",
		ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}}
	return s
}
func (s *spec) spreadBy(k string) *spec {
	s.s.SpreadPolicy.SpreadConstraints = []clusterv1beta1.SpreadConstraintsTerm{{TopologyKey: k, TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel}}
	return s
}

// builtIn and addOn are score coordinates.
func builtIn(name string) clusterv1beta1.ScoreCoordinate {
	return clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}
}

var addOnScore = clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
	AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "score"}}

// indexed is one placement of the event tests as the index knows it.
type indexed struct {
	ns, name string
	spec     *spec
	// selected is the number of clusters of its last run.
	selected int
	// decides are the clusters its PlacementDecision names.
	decides []string
}

// eventReconciler returns a Reconciler whose cache holds the sets, the
// bindings and clusters, with placements in its index and their decisions
// in its aggregate.
func eventReconciler(t *testing.T, placements []indexed, clusters ...*clusterv1.ManagedCluster) *Reconciler {
	t.Helper()
	global := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "global"},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}}
	bind := func(ns, set string) client.Object {
		return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
	}
	objs := []client.Object{
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}},
		global, bind(appsNS, "s"), bind(appsNS, "elsewhere"), bind(fleetNS, "global"),
	}
	for _, c := range clusters {
		objs = append(objs, c)
	}
	r := &Reconciler{
		Client:    fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).Build(),
		decisions: newDecisionAggregate(), index: newPlacementIndex(),
	}
	for _, p := range placements {
		pl := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Generation: 1,
			UID: types.UID(p.name)}, Spec: p.spec.s}
		r.index.observe(pl)
		r.index.scheduled(types.NamespacedName{Namespace: p.ns, Name: p.name}, p.selected)
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name + "-decision-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: p.name}}}
		for _, c := range p.decides {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		r.decisions.set(d)
	}
	return r
}

// drain returns the sorted "namespace/name" of everything q holds.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		q.Done(req)
		out = append(out, req.String())
	}
	slices.Sort(out)
	return out
}

// in names placements of the apps namespace as drain does.
func in(ns string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ns + "/" + n
	}
	return out
}

func TestClusterEventsEnqueue(t *testing.T) {
	// The clusters the placements decide before each event.
	placements := []indexed{
		{ns: appsNS, name: "prod", spec: byLabel("env", "prod"), selected: 2, decides: []string{"c-prod", "c-stale"}},
		{ns: appsNS, name: "dev", spec: byLabel("env", "dev"), selected: 1, decides: []string{"c-dev"}},
		{ns: appsNS, name: "aws", spec: byClaim("cloud", "aws"), selected: 1, decides: []string{"c-aws"}},
		{ns: appsNS, name: "cel", spec: byCEL(`managedCluster.metadata.annotations["tier"] == "gold"`), selected: 1, decides: []string{"c-gold"}},
		{ns: appsNS, name: "any", spec: anyCluster(), selected: 5},
		{ns: appsNS, name: "one-prod", spec: byLabel("env", "prod").count(1), selected: 1, decides: []string{"c-prod-2"}},
		{ns: appsNS, name: "balance-dev", spec: byLabel("env", "dev").prioritize(builtIn(clusterv1beta1.PrioritizerBalance)), selected: 1},
		{ns: appsNS, name: "addon-prod", spec: byLabel("env", "prod").prioritize(addOnScore), selected: 1},
		{ns: appsNS, name: "cpu-prod", spec: byLabel("env", "prod").prioritize(builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU)), selected: 1},
		{ns: appsNS, name: "groups-prod", spec: byLabel("env", "prod").groupsBy("tier", "canary"), selected: 1},
		{ns: appsNS, name: "spread-prod", spec: byLabel("env", "prod").spreadBy("zone"), selected: 1},
		{ns: appsNS, name: "nothing", spec: byLabel("env", "none"), selected: 0},
		{ns: appsNS, name: "elsewhere-only", spec: anyCluster().sets("elsewhere"), selected: 0},
		{ns: fleetNS, name: "fleet-prod", spec: byLabel("env", "prod"), selected: 3},
	}
	prodReaders := in(appsNS, "addon-prod", "cel", "cpu-prod", "groups-prod", "one-prod", "prod", "spread-prod")
	tests := []struct {
		name     string
		old, cur *clusterv1.ManagedCluster
		want     []string
	}{
		{
			name: "label change into a selector: the placements that select it now (and CEL)",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "prod").build(),
			want: append(slices.Clone(prodReaders), "fleet/fleet-prod"),
		},
		{
			name: "label change out of a selector: the placements that selected it",
			old:  mc("c1", "env", "dev").build(), cur: mc("c1", "env", "qa").build(),
			want: in(appsNS, "balance-dev", "cel", "dev"),
		},
		{
			name: "label change from one selector to another: both",
			old:  mc("c1", "env", "dev").build(), cur: mc("c1", "env", "prod").build(),
			want: append(in(appsNS, "addon-prod", "balance-dev", "cel", "cpu-prod", "dev", "groups-prod", "one-prod", "prod", "spread-prod"), "fleet/fleet-prod"),
		},
		{
			name: "label change no selector sees: only CEL",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "test").build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "decision-group label of a cluster the predicates do not select: only CEL",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "qa", "tier", "canary").build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "decision-group label of a selected cluster: the placements reading labels that select it",
			old:  mc("c1", "env", "prod").build(), cur: mc("c1", "env", "prod", "tier", "canary").build(),
			want: append(slices.Clone(prodReaders), "fleet/fleet-prod"),
		},
		{
			name: "spread label of a cluster the predicates do not select: only CEL",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "qa", "zone", "z1").build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "claim change into a claim selector",
			old:  mc("c1").claim("cloud", "gcp").build(), cur: mc("c1").claim("cloud", "aws").build(),
			want: in(appsNS, "aws", "cel"),
		},
		{
			name: "claim change out of a claim selector",
			old:  mc("c-aws").claim("cloud", "aws").build(), cur: mc("c-aws").build(),
			want: in(appsNS, "aws", "cel"),
		},
		{
			name: "claim change no selector sees",
			old:  mc("c1").claim("cloud", "gcp").build(), cur: mc("c1").claim("cloud", "azure").build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "taint on a cluster some placements select: those, the ones without predicates and CEL",
			old:  mc("c-prod", "env", "prod").build(), cur: mc("c-prod", "env", "prod").taint("drain").build(),
			want: append(in(appsNS, "addon-prod", "any", "cel", "cpu-prod", "groups-prod", "one-prod", "prod", "spread-prod"), "fleet/fleet-prod"),
		},
		{
			name: "taint on a cluster no selector can select",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "qa").taint("drain").build(),
			want: in(appsNS, "any", "cel"),
		},
		{
			name: "taint on a decided cluster the predicates no longer match: its decider too",
			old:  mc("c-stale", "env", "qa").build(), cur: mc("c-stale", "env", "qa").taint("drain").build(),
			want: in(appsNS, "any", "cel", "prod"),
		},
		{
			name: "the decided cluster of numberOfClusters 1 leaves its selector: refilled",
			old:  mc("c-prod-2", "env", "prod").build(), cur: mc("c-prod-2", "env", "qa").build(),
			want: append(slices.Clone(prodReaders), "fleet/fleet-prod"),
		},
		{
			name: "allocatable: the ResourceAllocatable placements that select it (and CEL)",
			old:  mc("c-prod", "env", "prod").cpu("2").build(), cur: mc("c-prod", "env", "prod").cpu("4").build(),
			want: in(appsNS, "cel", "cpu-prod"),
		},
		{
			name: "allocatable of a cluster the ResourceAllocatable placement cannot select",
			old:  mc("c-dev", "env", "dev").cpu("2").build(), cur: mc("c-dev", "env", "dev").cpu("4").build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "heartbeat: only CEL",
			old:  mc("c-prod", "env", "prod").build(), cur: mc("c-prod", "env", "prod").condition().build(),
			want: in(appsNS, "cel"),
		},
		{
			name: "created: the placements that select it, without predicates, CEL, and those that select nothing",
			cur:  mc("c-new", "env", "dev").build(),
			want: in(appsNS, "any", "balance-dev", "cel", "dev", "nothing"),
		},
		{
			name: "created, matching no selector",
			cur:  mc("c-new", "env", "qa").build(),
			want: in(appsNS, "any", "cel", "nothing"),
		},
		{
			name: "deleted, decided",
			old:  mc("c-prod", "env", "prod").build(),
			want: append(in(appsNS, "addon-prod", "any", "cel", "cpu-prod", "groups-prod", "nothing", "one-prod", "prod", "spread-prod"), "fleet/fleet-prod"),
		},
		{
			name: "deletion started, decided",
			old:  mc("c-dev", "env", "dev").build(), cur: mc("c-dev", "env", "dev").deleting().build(),
			want: in(appsNS, "any", "balance-dev", "cel", "dev", "nothing"),
		},
		{
			name: "moved to another set: placements of both sets that may select it",
			old:  mc("c1", "env", "qa").build(), cur: mc("c1", "env", "qa").label(clusterv1beta2.ClusterSetLabel, "elsewhere").build(),
			want: in(appsNS, "any", "cel", "elsewhere-only", "nothing"),
		},
		{
			name: "left every set of apps: placements of apps that may have selected it",
			old:  mc("c1", "env", "prod").build(), cur: mc("c1", "env", "prod").unlabel(clusterv1beta2.ClusterSetLabel).build(),
			want: append(in(appsNS, "addon-prod", "any", "cel", "cpu-prod", "groups-prod", "nothing", "one-prod", "prod", "spread-prod"), "fleet/fleet-prod"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eventReconciler(t, placements)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			h := r.clusterHandler()
			ctx := context.Background()
			switch {
			case tt.old == nil:
				h.Create(ctx, event.CreateEvent{Object: tt.cur}, q)
			case tt.cur == nil:
				h.Delete(ctx, event.DeleteEvent{Object: tt.old}, q)
			default:
				h.Update(ctx, event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.cur}, q)
			}
			got := drain(q)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("enqueued %v,\nwant     %v", got, want)
			}
		})
	}
}

func TestScoreEventsEnqueue(t *testing.T) {
	placements := []indexed{
		{ns: appsNS, name: "addon-prod", spec: byLabel("env", "prod").prioritize(addOnScore), selected: 1},
		{ns: appsNS, name: "addon-dev", spec: byLabel("env", "dev").prioritize(addOnScore), selected: 1, decides: []string{"c-prod"}},
		{ns: appsNS, name: "cel", spec: byCEL(`managedCluster.scores("demo").size() > 0`), selected: 1},
		{ns: appsNS, name: "prod", spec: byLabel("env", "prod"), selected: 1},
	}
	tests := []struct {
		name    string
		cluster *clusterv1.ManagedCluster
		want    []string
	}{
		{"score of a selected cluster: the placements reading scores that select or decide it",
			mc("c-prod", "env", "prod").build(), in(appsNS, "addon-dev", "addon-prod", "cel")},
		{"score of a cluster no add-on prioritizer selects: CEL alone",
			mc("c-qa", "env", "qa").build(), in(appsNS, "cel")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eventReconciler(t, placements, tt.cluster)
			score := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: tt.cluster.Name, Name: "demo"}}
			var got []string
			for _, req := range r.placementsOfScore(context.Background(), score) {
				got = append(got, req.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("enqueued %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlacementIndex(t *testing.T) {
	key := types.NamespacedName{Namespace: appsNS, Name: "p"}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "p", UID: "u1", Generation: 1},
		Spec: byLabel("env", "prod").s}
	x := newPlacementIndex()
	view := func() (v indexView, ok bool) {
		x.each(appsNS, []string{"s"}, func(got indexView) { v, ok = got, true })
		return v, ok
	}
	prod := mc("c", "env", "prod").build()
	dev := mc("c", "env", "dev").build()

	x.observe(p)
	v, ok := view()
	if !ok || !v.selectsNone || !v.filter.MayMatch(prod) || v.filter.MayMatch(dev) {
		t.Fatalf("after observe: %+v %v; want selectsNone until scheduled, env=prod only", v, ok)
	}
	x.scheduled(key, 3)
	if v, _ = view(); v.selectsNone {
		t.Error("selectsNone after a run that selected 3 clusters")
	}
	x.observe(p)
	if v, _ = view(); !v.selectsNone {
		t.Error("a new run of the same generation must count as selecting nothing until it is scheduled")
	}

	p.Generation, p.Spec = 2, byLabel("env", "dev").s
	x.observe(p)
	if v, _ = view(); !v.filter.MayMatch(dev) || v.filter.MayMatch(prod) || v.placement.Generation != 2 {
		t.Errorf("after a spec change the index still filters by the old predicates")
	}
	p.Spec.ClusterSets = []string{"other"}
	p.Generation = 3
	x.observe(p)
	if _, ok := view(); ok {
		t.Error("a placement restricted to set other is listed for set s")
	}
	x.forget(key)
	if len(x.byNamespace) != 0 {
		t.Errorf("forget left %v", x.byNamespace)
	}
	var nilIndex *placementIndex
	nilIndex.observe(p)
	nilIndex.scheduled(key, 1)
	nilIndex.forget(key)
	nilIndex.each(appsNS, nil, func(indexView) { t.Error("a nil index lists a placement") })
}

func TestDecisionAggregateDeciders(t *testing.T) {
	a := newDecisionAggregate()
	dec := func(name, placement string, clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: name,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: placement}}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	p := types.NamespacedName{Namespace: appsNS, Name: "p"}
	q := types.NamespacedName{Namespace: appsNS, Name: "q"}
	a.set(dec("p-decision-1", "p", "c1", "c2"))
	a.set(dec("p-decision-2", "p", "c3"))
	a.set(dec("q-decision-1", "q", "c1"))
	check := func(step, cluster string, want ...types.NamespacedName) {
		t.Helper()
		got := a.deciders(cluster)
		if len(got) != len(want) {
			t.Errorf("%s: deciders(%s) = %v, want %v", step, cluster, got, want)
		}
		for _, w := range want {
			if _, ok := got[w]; !ok {
				t.Errorf("%s: deciders(%s) = %v, want %v", step, cluster, got, want)
			}
		}
	}
	check("set", "c1", p, q)
	check("set", "c3", p)
	check("set", "c9")
	a.set(dec("p-decision-1", "p", "c2"))
	check("update drops c1 from p", "c1", q)
	a.remove(types.NamespacedName{Namespace: appsNS, Name: "q-decision-1"})
	check("remove", "c1")
	if _, ok := a.byCluster["c1"]; ok {
		t.Error("an emptied cluster stays in byCluster")
	}
}

func TestReconcileFeedsTheIndex(t *testing.T) {
	ctx := context.Background()
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "s"},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "s"}}
	placement := func(name string, s *spec) *clusterv1beta1.Placement {
		return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: name, Generation: 1}, Spec: s.s}
	}
	disabled := placement("disabled", anyCluster())
	disabled.Annotations = map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).
		WithObjects(set, binding, mc("c1", "env", "prod").build(),
			placement("prod", byLabel("env", "prod")), placement("none", byLabel("env", "none")), disabled).
		WithStatusSubresource(&clusterv1beta1.Placement{}, &clusterv1beta1.PlacementDecision{}).
		WithIndex(&clusterv1beta1.PlacementDecision{}, decisionPlacementIndex, func(o client.Object) []string {
			return []string{o.GetLabels()[clusterv1beta1.PlacementLabel]}
		}).Build()
	r := &Reconciler{Client: c, Writer: c, Scheduler: placementlib.NewScheduler(),
		decisions: newDecisionAggregate(), own: newOwnWrites(), index: newPlacementIndex()}
	// "disabled" was scheduled before its annotation, and "gone" before it
	// was deleted.
	r.index.observe(disabled)
	r.index.observe(placement("gone", anyCluster()))
	for _, name := range []string{"prod", "none", "disabled", "gone"} {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: appsNS, Name: name}}); err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
	}
	got := map[string]bool{}
	r.index.each(appsNS, []string{"s"}, func(v indexView) { got[v.placement.Name] = v.selectsNone })
	want := map[string]bool{"prod": false, "none": true}
	if !maps.Equal(got, want) {
		t.Errorf("index after reconciling: %v (name → selectsNone), want %v", got, want)
	}
}
