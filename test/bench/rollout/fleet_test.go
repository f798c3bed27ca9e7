package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// setNamespace holds the benchmarks' Placement and
	// ManifestWorkReplicaSets; the global ManagedClusterSet is bound to it.
	setNamespace = "rollout"
	// placementName is the Placement that selects every cluster.
	placementName = "all"
	// kubeFleet is KubeFleet's published figures, beside which ours are read
	// (KubeFleet Q1 2026 performance report).
	kubeFleet = "KubeFleet, published, at 1,000 member clusters: a 3-stage staged update run at 50 % concurrency completes in under 2 minutes, a new placement completes at p90 under 30 s"
)

// fleet is a hub with registered simulated clusters, the global set bound
// to setNamespace and Placement placementName deciding every cluster.
type fleet struct {
	*benchkit.Fleet
	// hubW is an admin client of the hub that can watch.
	hubW client.WithWatch
	// clusters are the simulated clusters' names.
	clusters []string
}

// startFleet starts the hub (and the managed control planes named in
// managed), registers -clusters simulated clusters, which acknowledge their
// ManifestWorks when serveWorks, binds the global set to setNamespace and
// waits until Placement placementName decides every cluster.
func startFleet(b *testing.B, serveWorks bool, managed ...string) *fleet {
	b.Helper()
	if *clusterCount < 1 {
		b.Fatalf("-clusters %d: at least 1", *clusterCount)
	}
	bf := benchkit.StartFleet(b, config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}}, managed...)
	ctx := b.Context()
	f := &fleet{Fleet: bf, clusters: clusterNames(*clusterCount)}
	var err error
	if f.hubW, err = client.NewWithWatch(bf.Hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: bf.HubClient.RESTMapper()}); err != nil {
		b.Fatal(err)
	}
	h := benchkit.NewSimHub(b, bf)
	h.ServeWorks = serveWorks
	start := time.Now()
	benchkit.StartSimAgents(ctx, b, h, f.clusters)
	b.Logf("registered %d simulated clusters in %s", len(f.clusters), benchkit.Seconds(time.Since(start)))

	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: setNamespace}},
		&clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: clusterv1beta2.GlobalClusterSetName},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterv1beta2.GlobalClusterSetName},
		},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: placementName}},
	} {
		if err := f.HubClient.Create(ctx, obj); err != nil {
			b.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, *opTimeout, fmt.Sprintf("Placement %s to decide %d clusters", placementName, len(f.clusters)), func(ctx context.Context) (bool, error) {
		decisions := &clusterv1beta1.PlacementDecisionList{}
		if err := f.HubClient.List(ctx, decisions, client.InNamespace(setNamespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placementName}); err != nil {
			return false, err
		}
		n := 0
		for i := range decisions.Items {
			n += len(decisions.Items[i].Status.Decisions)
		}
		return n == len(f.clusters), nil
	})
	return f
}

// clusterNames names n simulated clusters, sim-0001 and on.
func clusterNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("sim-%04d", i+1)
	}
	return out
}

// cliResult is what one in-process `kubectl ocm` command wrote and returned.
type cliResult struct {
	out, errOut string
	err         error
	took        time.Duration
}

// ocm runs `kubectl ocm ARGS` in process through the plugin's root command,
// as the hub admin of the environment's kubeconfig (context hub) unless
// ARGS say otherwise (--as).
func (f *fleet) ocm(ctx context.Context, args ...string) cliResult {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := root.NewCmdRoot(streams)
	cmd.SetArgs(append(args, "--kubeconfig", f.Env.Kubeconfig(), "--context", "hub"))
	start := time.Now()
	err := cmd.ExecuteContext(ctx)
	return cliResult{out: out.String(), errOut: errOut.String(), err: err, took: time.Since(start)}
}

// mustOCM runs ocm and fails b when the command fails.
func (f *fleet) mustOCM(ctx context.Context, b *testing.B, args ...string) cliResult {
	b.Helper()
	r := f.ocm(ctx, args...)
	if r.err != nil {
		b.Fatalf("kubectl ocm %s: %v\n%s%s", strings.Join(args, " "), r.err, r.out, r.errOut)
	}
	return r
}

// configMap is the manifest of ConfigMap namespace/name whose key value
// holds value.
func configMap(namespace, name, value string) workv1.Manifest {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{"value": value}}
	raw, err := json.Marshal(cm)
	if err != nil {
		panic(err) // a ConfigMap always encodes
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

// newSet is ManifestWorkReplicaSet name of setNamespace over placementName
// with strategy, the given annotations and manifests as its template.
func newSet(name string, strategy clusterv1alpha1.RolloutStrategy, annotations map[string]string, manifests ...workv1.Manifest) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: name, Annotations: annotations},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: placementName, RolloutStrategy: strategy}},
		},
	}
}

// revisionHash is the hash of set's current revision, as the hub controller
// computes it and records it on each work (revision.HashAnnotation). set
// must be as the hub stored it (defaults filled in).
func revisionHash(b *testing.B, set *workv1alpha1.ManifestWorkReplicaSet) string {
	b.Helper()
	_, hash, err := revision.Of(set).Encode()
	if err != nil {
		b.Fatal(err)
	}
	return hash
}

// createSet creates set, with times recording its first revision from
// before the create on, and returns that revision's hash.
func (f *fleet) createSet(ctx context.Context, b *testing.B, set *workv1alpha1.ManifestWorkReplicaSet, times *revisionTimes) string {
	b.Helper()
	// The hash is taken from a server-side dry run (the hub fills in
	// defaults), so that times records from before the first work can be
	// written.
	dry := set.DeepCopy()
	if err := f.HubClient.Create(ctx, dry, client.DryRunAll); err != nil {
		b.Fatalf("create ManifestWorkReplicaSet %s (server dry run): %v", set.Name, err)
	}
	hash := revisionHash(b, dry)
	times.target(hash)
	if err := f.HubClient.Create(ctx, set); err != nil {
		b.Fatalf("create ManifestWorkReplicaSet %s: %v", set.Name, err)
	}
	if got := revisionHash(b, set); got != hash {
		b.Fatalf("ManifestWorkReplicaSet %s: revision hash %s as stored, %s in the dry run", set.Name, got, hash)
	}
	return hash
}

// setTemplate makes manifests the template of set (a new revision), with
// times recording that revision from before the update on, and returns its
// hash.
func (f *fleet) setTemplate(ctx context.Context, b *testing.B, set *workv1alpha1.ManifestWorkReplicaSet, times *revisionTimes, manifests ...workv1.Manifest) string {
	b.Helper()
	dry := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := f.HubClient.Get(ctx, client.ObjectKeyFromObject(set), dry); err != nil {
		b.Fatal(err)
	}
	dry.Spec.ManifestWorkTemplate.Workload.Manifests = manifests
	if err := f.HubClient.Update(ctx, dry, client.DryRunAll); err != nil {
		b.Fatalf("update ManifestWorkReplicaSet %s (server dry run): %v", set.Name, err)
	}
	hash := revisionHash(b, dry)
	times.target(hash)
	if err := benchkit.Update(ctx, f.HubClient, set, func() { set.Spec.ManifestWorkTemplate.Workload.Manifests = manifests }); err != nil {
		b.Fatal(err)
	}
	if got := revisionHash(b, set); got != hash {
		b.Fatalf("ManifestWorkReplicaSet %s: revision hash %s as stored, %s in the dry run", set.Name, got, hash)
	}
	return hash
}

// waitApplied waits until times saw the works of clusters Applied.
func waitApplied(ctx context.Context, b *testing.B, times *revisionTimes, clusters []string, what string) time.Time {
	b.Helper()
	return benchkit.Poll(ctx, b, benchkit.FastPoll, *opTimeout, fmt.Sprintf("%s: %d works Applied", what, len(clusters)), func(context.Context) (bool, error) {
		return times.countApplied(clusters) == len(clusters), nil
	})
}

// rolledOut reports whether set's rollout of its current generation is
// Complete with want works Applied.
func rolledOut(set *workv1alpha1.ManifestWorkReplicaSet, want int) bool {
	c := meta.FindStatusCondition(set.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == workv1alpha1.ReasonComplete && c.ObservedGeneration == set.Generation &&
		set.Status.Summary.Total == want && set.Status.Summary.Applied == want
}

// waitSet polls ManifestWorkReplicaSet name every FastPoll until cond
// holds and returns when it did.
func (f *fleet) waitSet(ctx context.Context, b *testing.B, name, what string, cond func(*workv1alpha1.ManifestWorkReplicaSet) bool) time.Time {
	b.Helper()
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	return benchkit.Poll(ctx, b, benchkit.FastPoll, *opTimeout, fmt.Sprintf("ManifestWorkReplicaSet %s %s", name, what), func(ctx context.Context) (bool, error) {
		if err := f.HubClient.Get(ctx, client.ObjectKey{Namespace: setNamespace, Name: name}, set); err != nil {
			return false, err
		}
		return cond(set), nil
	})
}

// waitRolledOut waits until set name's rollout is Complete with every
// cluster's work Applied and returns when it was seen so.
func (f *fleet) waitRolledOut(ctx context.Context, b *testing.B, name string) time.Time {
	b.Helper()
	n := len(f.clusters)
	return f.waitSet(ctx, b, name, fmt.Sprintf("rolled out (Complete, %d works Applied)", n), func(s *workv1alpha1.ManifestWorkReplicaSet) bool { return rolledOut(s, n) })
}

// deleteSet deletes set name and waits until its works are gone, so that
// what comes next starts from a hub without them.
func (f *fleet) deleteSet(ctx context.Context, b *testing.B, name string) {
	b.Helper()
	if err := f.HubClient.Delete(ctx, &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: name}}); err != nil {
		b.Fatalf("delete ManifestWorkReplicaSet %s: %v", name, err)
	}
	label := setLabel(b, name)
	benchkit.Poll(ctx, b, benchkit.SlowPoll, *opTimeout, "the works of ManifestWorkReplicaSet "+name+" deleted", func(ctx context.Context) (bool, error) {
		works := &workv1.ManifestWorkList{}
		err := f.HubClient.List(ctx, works, client.Limit(1), client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: label})
		return len(works.Items) == 0, err
	})
}

// setLabel is the value of the manifestworkreplicaset label the works of
// set name carry (the benchmark's names are short enough to have one).
func setLabel(b *testing.B, name string) string {
	b.Helper()
	v, ok := workv1alpha1.OwnerLabels(setNamespace, name)[workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey]
	if !ok {
		b.Fatalf("ManifestWorkReplicaSet %s/%s: name too long for the %s label", setNamespace, name, workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey)
	}
	return v
}

// watchWorks runs an informer of the hub's ManifestWorks labeled
// key=value in every namespace, handing each one delivered to observe with
// the moment of its delivery, until the returned stop (or the end of b).
func (f *fleet) watchWorks(ctx context.Context, b *testing.B, key, value string, observe func(*workv1.ManifestWork, time.Time)) (stop func()) {
	b.Helper()
	return f.watch(ctx, b, &workv1.ManifestWorkList{}, &workv1.ManifestWork{}, func(o any, at time.Time) {
		if w, ok := o.(*workv1.ManifestWork); ok {
			observe(w, at)
		}
	}, client.MatchingLabels{key: value})
}

// watch runs an informer of the hub's objects of list's kind (obj's type)
// selected by opts, handing each one delivered to observe with the moment
// of its delivery, until the returned stop (or the end of b). It returns
// once the informer has synced.
func (f *fleet) watch(ctx context.Context, b *testing.B, list client.ObjectList, obj client.Object, observe func(any, time.Time), opts ...client.ListOption) (stop func()) {
	b.Helper()
	wctx, cancel := context.WithCancel(ctx)
	loops := &sync.WaitGroup{}
	lw := benchkit.ListWatch(f.hubW, list, opts...)
	synced := benchkit.RunInformer(wctx, loops, lw, obj, func(o any) { observe(o, time.Now()) })
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			loops.Wait()
		}
	}
	b.Cleanup(stop)
	benchkit.Poll(ctx, b, benchkit.FastPoll, *opTimeout, fmt.Sprintf("the watch of %T to sync", obj), func(context.Context) (bool, error) { return synced(), nil })
	return stop
}
