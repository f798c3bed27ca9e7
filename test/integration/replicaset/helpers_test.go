package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/replicaset"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/workttl"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// pollTimeout bounds every wait for the controller.
const pollTimeout = 60 * time.Second

// suite is the hub shared by the subtests.
type suite struct {
	ctx   context.Context
	admin client.Client
	hub   *framework.Cluster
	// ocm runs kubectl ocm against the hub.
	ocm clitest.CLI
}

// setup starts a hub, installs the shipped manifests and runs the
// ManifestWorkReplicaSet controller as the hub controller's ServiceAccount.
func setup(t *testing.T) *suite {
	t.Helper()
	ctx, env := hubtest.Start(t, 15*time.Minute)
	hubCluster := env.Cluster("hub")
	s := &suite{ctx: ctx, admin: hubCluster.Client(), hub: hubCluster, ocm: clitest.CLI{Kubeconfig: env.Kubeconfig()}}
	hubtest.RunControllers(t, hubCluster, 2, replicaset.SetupWithManager, workttl.SetupWithManager)
	return s
}

// poll waits until cond holds, failing t with what when it never does.
func (s *suite) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(s.ctx, t, pollTimeout, what, cond)
}

// cluster creates a cluster namespace and a ManagedCluster with labels.
func (s *suite) cluster(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	kit.Must(t, "create namespace "+name, s.admin.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	kit.Must(t, "create cluster "+name, s.admin.Create(s.ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
}

// group is a decision group for decisions.
type group struct {
	name     string
	clusters []string
}

// placement creates namespace ns and the Placement name with decisions.
func (s *suite) placement(t *testing.T, ns, name string, groups ...group) {
	t.Helper()
	kit.Must(t, "create namespace "+ns, s.admin.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	kit.Must(t, "create placement", s.admin.Create(s.ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	s.decisions(t, ns, name, groups...)
}

// decisions writes one PlacementDecision per group, as the scheduler
// would, and deletes the placement's other PlacementDecisions.
func (s *suite) decisions(t *testing.T, ns, placement string, groups ...group) {
	t.Helper()
	keep := map[string]bool{}
	for i, g := range groups {
		name := fmt.Sprintf("%s-decision-%d", placement, i+1)
		keep[name] = true
		pd := &clusterv1beta1.PlacementDecision{}
		err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, pd)
		if client.IgnoreNotFound(err) != nil {
			t.Fatalf("get decision: %v", err)
		}
		if err != nil {
			pd = &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				clusterv1beta1.PlacementLabel:          placement,
				clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(i),
				clusterv1beta1.DecisionGroupNameLabel:  g.name,
			}}}
			kit.Must(t, "create decision", s.admin.Create(s.ctx, pd))
		}
		pd.Status.Decisions = []clusterv1beta1.ClusterDecision{}
		for _, c := range g.clusters {
			pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "test"})
		}
		kit.Must(t, "write decisions", s.admin.Status().Update(s.ctx, pd))
	}
	list := &clusterv1beta1.PlacementDecisionList{}
	kit.Must(t, "list decisions", s.admin.List(s.ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}))
	for i := range list.Items {
		if !keep[list.Items[i].Name] {
			kit.Must(t, "delete decision", s.admin.Delete(s.ctx, &list.Items[i]))
		}
	}
}

// configMap is a ConfigMap manifest with data.v = value.
func configMap(value string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"app"},"data":{"v":"` + value + `"}}`)}}
}

// newMWRS builds a ManifestWorkReplicaSet of one ConfigMap for placement.
func newMWRS(ns, name, placement string, strategy clusterv1alpha1.RolloutStrategy, value string) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap(value)}}},
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: strategy}},
		},
	}
}

// works returns the ManifestWorks of the ManifestWorkReplicaSet ns/name by cluster.
func (s *suite) works(ctx context.Context, ns, name string) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := s.admin.List(ctx, list, client.MatchingLabels(workv1alpha1.OwnerLabels(ns, name))); err != nil {
		return nil, err
	}
	out := map[string]*workv1.ManifestWork{}
	for i := range list.Items {
		if workv1alpha1.Owns(ns, name, &list.Items[i]) {
			out[list.Items[i].Namespace] = &list.Items[i]
		}
	}
	return out, nil
}

// clustersOf returns the sorted keys of works.
func clustersOf(works map[string]*workv1.ManifestWork) []string {
	out := []string{}
	for c := range works {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// waitWorks waits until exactly clusters have a ManifestWork of ns/name.
func (s *suite) waitWorks(t *testing.T, ns, name string, clusters ...string) map[string]*workv1.ManifestWork {
	t.Helper()
	sort.Strings(clusters)
	var works map[string]*workv1.ManifestWork
	s.poll(t, fmt.Sprintf("ManifestWorks of %s/%s on exactly %v", ns, name, clusters), func(ctx context.Context) (bool, error) {
		var err error
		works, err = s.works(ctx, ns, name)
		return slices.Equal(clustersOf(works), clusters), err
	})
	return works
}

// expectWorks fails t unless exactly clusters have a ManifestWork of ns/name now.
func (s *suite) expectWorks(t *testing.T, ns, name string, clusters ...string) {
	t.Helper()
	sort.Strings(clusters)
	works, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list works", err)
	if got := clustersOf(works); !slices.Equal(got, clusters) {
		t.Fatalf("ManifestWorks of %s/%s on %v, want exactly %v", ns, name, got, clusters)
	}
}

// waitStatus waits until the ManifestWorkReplicaSet ns/name satisfies ok.
func (s *suite) waitStatus(t *testing.T, ns, name, what string, ok func(*workv1alpha1.ManifestWorkReplicaSet) bool) *workv1alpha1.ManifestWorkReplicaSet {
	t.Helper()
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	s.poll(t, fmt.Sprintf("%s/%s: %s", ns, name, what), func(ctx context.Context) (bool, error) {
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mwrs); err != nil {
			return false, err
		}
		return ok(mwrs), nil
	})
	return mwrs
}

// cond returns a check that condition typ has status and reason.
func cond(typ string, status metav1.ConditionStatus, reason string) func(*workv1alpha1.ManifestWorkReplicaSet) bool {
	return func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == m.Generation
	}
}

// report plays the work agent: it sets Applied and Available of the
// ManifestWork name in cluster at its current generation.
func (s *suite) report(t *testing.T, cluster, name string, status metav1.ConditionStatus) time.Time {
	t.Helper()
	var at time.Time
	s.poll(t, "report status of "+cluster+"/"+name, func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
			return false, err
		}
		now := metav1.Now()
		for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			meta.SetStatusCondition(&mw.Status.Conditions, metav1.Condition{Type: typ, Status: status,
				Reason: "Test", ObservedGeneration: mw.Generation, LastTransitionTime: now})
			c := meta.FindStatusCondition(mw.Status.Conditions, typ)
			c.LastTransitionTime = now
		}
		at = now.Rfc3339Copy().Time
		return true, s.admin.Status().Update(ctx, mw)
	})
	return at
}

// value returns data.v of the ConfigMap of mw.
func value(t *testing.T, mw *workv1.ManifestWork) string {
	t.Helper()
	var obj struct {
		Data map[string]string `json:"data"`
	}
	kit.Must(t, "decode manifest", json.Unmarshal(mw.Spec.Workload.Manifests[0].Raw, &obj))
	return obj.Data["v"]
}

// seedRolloutStrategy reads the rolloutStrategy of the seed example
// 001-rolloutstrategy-progressive.yaml.
func seedRolloutStrategy(t *testing.T) clusterv1alpha1.RolloutStrategy {
	t.Helper()
	data := seeds.Data(t, "001-rolloutstrategy-progressive.yaml")
	var seed struct {
		Spec struct {
			InstallStrategy struct {
				Placements []struct {
					RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy"`
				} `json:"placements"`
			} `json:"installStrategy"`
		} `json:"spec"`
	}
	kit.Must(t, "decode the seed", yaml.Unmarshal(data, &seed))
	if len(seed.Spec.InstallStrategy.Placements) != 1 {
		t.Fatalf("seed has %d placements, want 1", len(seed.Spec.InstallStrategy.Placements))
	}
	return seed.Spec.InstallStrategy.Placements[0].RolloutStrategy
}
