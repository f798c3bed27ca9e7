package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/payloadgen"
)

const (
	// largeName names the large payload's ManifestWork on cluster1, the
	// ManifestWorkReplicaSet that delivers it to cluster2, the set's
	// namespace on the hub and the ConfigMaps' namespace on the clusters.
	largeName = "large-payload"
	// largeMiB is the size of the payload.
	largeMiB = 50
)

// largeKinds are the kinds of the payload's objects on a managed cluster.
var largeKinds = []struct {
	gvk       schema.GroupVersionKind
	resource  string
	namespace string
}{
	{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "customresourcedefinitions", ""},
	{corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", largeName},
}

// testLargePayload delivers a 50 MiB payload of CRDs and ConfigMaps
// (payloadgen) to the clusters of a fleet of its own, whose agents and hub
// controller run as Pods: to cluster1 as a ManifestWork and to cluster2
// through a ManifestWorkReplicaSet, both written by `kubectl ocm work
// create`. Its second generation changes some ConfigMaps and removes
// others, and one of its chunks is withheld from each cluster until after
// the faults on its way there: a tampered copy of it is refused on
// cluster1 (ChunkDigestMismatch); the hub controller is killed while the
// set waits for it in its namespace, where the set's chunks stay (cluster2's
// agent reads them through the hub tunnel's server); without the chunk,
// cluster1's agent is killed and, back, reports ChunksMissing. Meanwhile
// both clusters run the first generation whole. Watches on both clusters, started before the update, show that no
// object of the second generation appeared before its last chunk was
// written and its agent had verified all of it; at the end both clusters
// run all of it, and the removed ConfigMaps are gone.
//
// A set writes a cluster's work only once every chunk is in the set's
// namespace, so an agent never sees an incomplete generation through one:
// the agent's faults take the work written directly.
//
// The fleet is its own so that the test runs beside the other fleets, and
// is stopped with it: nothing of the payload needs removing.
func testLargePayload(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1", "cluster2")
	f.joinAll(t, "cluster1", "cluster2")
	x := &largeFixture{f: f, hub: f.env.Cluster("hub").Client(), managed: map[string]client.Client{
		"cluster1": f.env.Cluster("cluster1").Client(), "cluster2": f.env.Cluster("cluster2").Client()}, released: map[string]time.Time{}}
	begin := time.Now()
	require.NoError(t, x.hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: largeName}}))
	for _, c := range x.managed {
		require.NoError(t, c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: largeName}}))
	}
	x.first = newLargeGeneration(t, payloadgen.Options{MiB: largeMiB, Namespace: largeName})
	x.second = newLargeGeneration(t, payloadgen.Options{MiB: largeMiB, Namespace: largeName, Generation: 2,
		Changed: func(i int) bool { return i%10 == 3 }, Removed: func(i int) bool { return i%45 == 20 }})

	kit.RunSteps(t, kit.Step{Name: "generation 1 delivered by kubectl ocm work create", Run: x.deliverFirst})
	x.watch(t)
	kit.RunSteps(t,
		kit.Step{Name: "a tampered chunk is refused, the cluster unchanged", Run: x.tampered},
		kit.Step{Name: "the hub controller killed while the set waits for a chunk", Run: x.hubControllerKilled},
		kit.Step{Name: "an agent killed with a chunk missing keeps generation 1", Run: x.agentKilled},
		kit.Step{Name: "generation 2 applied once its last chunk is written", Run: x.release},
		kit.Step{Name: "no cluster ran generation 2 before all of it was verified", Run: x.noEarlyChange},
	)
	t.Logf("large payload: %d MiB delivered twice to 2 clusters, with faults, in %s", largeMiB, time.Since(begin).Round(time.Second))
}

// largeFixture is what the steps of TestLargePayload share.
type largeFixture struct {
	f       *fleet
	hub     client.Client
	managed map[string]client.Client
	// first and second are the payload's generations.
	first, second *largeGeneration
	// before is the generation of cluster1's work that runs the first.
	before int64
	// fresh are the chunks of the second generation that the first does
	// not have, and withheld the one of them written last.
	fresh    []payload.Chunk
	withheld payload.Chunk
	// watches are, per cluster, the watches of each of largeKinds, started
	// before the update.
	watches map[string][]*writes
	// killedHub is the hub controller's instance killed while the set
	// waited for the withheld chunk.
	killedHub instance
	// released is when the withheld chunk was written for each cluster:
	// to cluster1's namespace, and to the set's for cluster2.
	released map[string]time.Time
}

// largeGeneration is one generation of the payload.
type largeGeneration struct {
	// manifests are the generated objects.
	manifests []workv1.Manifest
	// want is the generation label of each object, keyed Kind/name.
	want map[string]string
	// ref lists the chunks, and manifest is the ManifestPayload that stands
	// for them in a work.
	ref      *payloadv1alpha1.ManifestPayload
	chunks   []payload.Chunk
	manifest workv1.Manifest
}

// newLargeGeneration generates the payload o says and splits it.
func newLargeGeneration(t *testing.T, o payloadgen.Options) *largeGeneration {
	t.Helper()
	p := payloadgen.Generate(o)
	g := &largeGeneration{manifests: p.Manifests, want: map[string]string{}}
	for key, gen := range p.Generations() {
		g.want[key] = strconv.Itoa(gen)
	}
	var err error
	g.ref, g.chunks, err = payload.Split(largeName, g.manifests)
	require.NoError(t, err)
	g.manifest, err = payload.Manifest(g.ref)
	require.NoError(t, err)
	return g
}

// deliverFirst writes the first generation to a file and runs `kubectl ocm
// work create` twice at once: a ManifestWork on cluster1, and a
// ManifestWorkReplicaSet on a Placement that selects cluster2.
func (x *largeFixture) deliverFirst(t *testing.T) {
	f := x.f
	f.ocm(t, "clusterset", "bind", "default", "--namespace", largeName, "--context", "hub")
	f.ocm(t, "placement", "create", "cluster2", "-n", largeName, "--cel", `managedCluster.metadata.name == "cluster2"`, "--context", "hub")
	framework.Eventually(t.Context(), t, time.Minute, "placement cluster2 to select cluster2", func(ctx context.Context) (bool, error) {
		got, err := framework.DecidedClusters(ctx, x.hub, largeName, "cluster2")
		return slices.Equal(got, []string{"cluster2"}), err
	})
	var file bytes.Buffer
	for _, m := range x.first.manifests {
		file.Write(m.Raw)
		file.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "payload.json")
	require.NoError(t, os.WriteFile(path, file.Bytes(), 0o600))

	start := time.Now()
	var wg sync.WaitGroup
	var outs [2]string
	var errs [2]error
	wg.Go(func() {
		outs[0], errs[0] = f.tryOCM(t, "work", "create", largeName, "-f", path, "--clusters", "cluster1", "--context", "hub")
	})
	wg.Go(func() {
		outs[1], errs[1] = f.tryOCM(t, "work", "create", largeName, "-f", path, "--placement", largeName+"/cluster2", "--context", "hub")
	})
	wg.Wait()
	require.NoError(t, errs[0], outs[0])
	require.NoError(t, errs[1], outs[1])
	assert.Contains(t, outs[0], "chunks written to namespace cluster1")
	assert.Contains(t, outs[1], "chunks written to namespace "+largeName)
	for _, c := range []string{"cluster1", "cluster2"} {
		x.waitApplied(t, c, nil, 8*time.Minute)
	}
	x.waitSetRolledOut(t)
	t.Logf("generation 1: %d manifests, %.1f MiB in %d chunks, delivered to both clusters in %s",
		x.first.ref.Spec.Manifests, float64(x.first.ref.Spec.Size)/(1<<20), len(x.first.chunks), time.Since(start).Round(time.Second))
	for _, c := range []string{"cluster1", "cluster2"} {
		x.expectRuns(t, c, x.first, "after its delivery")
	}

	// The second generation's chunks that the first does not have.
	mw := x.work(t, "cluster1")
	x.before = mw.Generation
	p, err := payload.Of(&mw.Spec)
	require.NoError(t, err)
	require.NotNil(t, p, "the work of cluster1 holds no ManifestPayload")
	assert.Equal(t, x.first.ref.Spec.Chunks, p.Spec.Chunks, "the CLI cuts the payload as payload.Split does")
	had := map[string]bool{}
	for _, c := range p.Spec.Chunks {
		had[c.Digest] = true
	}
	var freshBytes int64
	for _, c := range x.second.chunks {
		if !had[c.Ref.Digest] {
			x.fresh = append(x.fresh, c)
			freshBytes += c.Ref.Size
		}
	}
	require.GreaterOrEqual(t, len(x.fresh), 3, "the second generation changes too little")
	// In the middle, so that the new chunks before and after it are
	// written.
	x.withheld = x.fresh[len(x.fresh)/2]
	t.Logf("generation 2: %d of %d chunks new (%.1f MiB); %s withheld until after the faults",
		len(x.fresh), len(x.second.chunks), float64(freshBytes)/(1<<20), x.withheld.Name())
}

// watch starts, on each cluster, a watch of the payload's objects of each
// of largeKinds that records their generation labels and deletions until t
// ends.
func (x *largeFixture) watch(t *testing.T) {
	x.watches = map[string][]*writes{}
	for _, c := range []string{"cluster1", "cluster2"} {
		for _, k := range largeKinds {
			x.watches[c] = append(x.watches[c], watchWrites(t, x.f.env.Cluster(c).RESTConfig(), k.gvk.GroupVersion().WithResource(k.resource),
				k.namespace, payloadgen.GenerationLabel, "metadata", "labels", payloadgen.GenerationLabel))
		}
	}
}

// tampered writes the second generation to cluster1's namespace with a
// copy of the withheld chunk whose content is not its name's, and points
// cluster1's work at it: the agent refuses the chunk by name and applies
// nothing.
func (x *largeFixture) tampered(t *testing.T) {
	ctx := t.Context()
	_, err := payload.Write(ctx, x.hub, "cluster1", x.except(x.withheld))
	require.NoError(t, err)
	bad, err := payload.Object("cluster1", x.withheld)
	require.NoError(t, err)
	data := bytes.Clone(x.withheld.Data)
	// One letter of a ConfigMap's text in upper case: the length kept.
	i := bytes.Index(data, []byte(`"config":"`))
	require.GreaterOrEqual(t, i, 0, "the withheld chunk holds no ConfigMap")
	i += len(`"config":"`)
	for data[i] < 'a' || data[i] > 'z' {
		i++
	}
	data[i] -= 'a' - 'A'
	bad.Spec.Encoding, bad.Spec.Data = payloadv1alpha1.EncodingIdentity, data
	kit.MustCreate(ctx, t, x.hub, bad)
	x.updateWork(t)

	x.waitStaged(t, "cluster1", payloadv1alpha1.ReasonChunkDigestMismatch, x.withheld.Name(), "delete it and write it again")
	x.expectRuns(t, "cluster1", x.first, "with a tampered chunk")
	require.NoError(t, x.hub.Delete(ctx, bad))
}

// agentKilled kills cluster1's agent while the second generation lacks a
// chunk; the restarted agent stages it again from the start, reports the
// chunk missing, and applies nothing. (Meanwhile the hub controller comes
// back, and the set's rollout goes on.)
func (x *largeFixture) agentKilled(t *testing.T) {
	x.waitStaged(t, "cluster1", payloadv1alpha1.ReasonChunksMissing, x.withheld.Name(),
		fmt.Sprintf("the cluster keeps generation %d", x.before))
	killed := x.f.kill(t, "cluster1", config.AgentNamespace, agentDeployment)
	// The condition goes, so that the next one is the restarted agent's.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mw := x.work(t, "cluster1")
		base := mw.DeepCopy()
		meta.RemoveStatusCondition(&mw.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		return x.hub.Status().Patch(t.Context(), mw, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}))
	x.f.readyAgain(t, "cluster1", config.AgentNamespace, agentDeployment, killed)
	x.waitStaged(t, "cluster1", payloadv1alpha1.ReasonChunksMissing, x.withheld.Name(),
		fmt.Sprintf("the cluster keeps generation %d", x.before))
	x.expectRuns(t, "cluster1", x.first, "after its agent restarted with a chunk missing")
}

// hubControllerKilled writes the second generation, but the withheld chunk,
// to the set's namespace and updates the set's template: the set reports
// the chunk missing, writes no work, and the hub controller is killed.
// cluster2's work is not written meanwhile, and no chunk is copied to its
// namespace. Then the withheld chunk is written to the set's namespace,
// where the restarted controller finds it.
func (x *largeFixture) hubControllerKilled(t *testing.T) {
	ctx := t.Context()
	_, err := payload.Write(ctx, x.hub, largeName, x.except(x.withheld))
	require.NoError(t, err)
	before := x.work(t, "cluster2")
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := x.hub.Get(ctx, client.ObjectKey{Namespace: largeName, Name: largeName}, set); err != nil {
			return err
		}
		set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{x.second.manifest}
		return x.hub.Update(ctx, set)
	}))
	framework.Eventually(ctx, t, 2*time.Minute, "the set waiting for "+x.withheld.Name(), func(ctx context.Context) (bool, error) {
		set := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := x.hub.Get(ctx, client.ObjectKey{Namespace: largeName, Name: largeName}, set); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(set.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)
		return c != nil && c.Reason == payloadv1alpha1.ReasonChunksMissing && strings.Contains(c.Message, x.withheld.Name()), nil
	})
	x.killedHub = x.f.kill(t, "hub", config.HubNamespace, hubController)
	after := x.work(t, "cluster2")
	assert.Equal(t, before.Generation, after.Generation, "cluster2's work written with a chunk missing from the set's namespace")
	names, err := kit.ChunkNames(ctx, x.hub, "cluster2")
	require.NoError(t, err)
	assert.Empty(t, names, "chunks in cluster2's namespace: the set's stay in its own")
	x.expectRuns(t, "cluster2", x.first, "while the set waits for a chunk")
	x.released["cluster2"] = time.Now()
	_, err = payload.Write(ctx, x.hub, largeName, []payload.Chunk{x.withheld})
	require.NoError(t, err)
}

// release writes the withheld chunk, last, to cluster1's namespace:
// cluster1's agent applies the second generation; the hub controller, back,
// has written cluster2's work, whose agent reads the set's chunks through
// the hub tunnel's server.
func (x *largeFixture) release(t *testing.T) {
	ctx := t.Context()
	x.released["cluster1"] = time.Now()
	_, err := payload.Write(ctx, x.hub, "cluster1", []payload.Chunk{x.withheld})
	require.NoError(t, err)
	x.f.readyAgain(t, "hub", config.HubNamespace, hubController, x.killedHub)
	for _, c := range []string{"cluster1", "cluster2"} {
		x.waitApplied(t, c, x.second.ref.Spec.Chunks, 5*time.Minute)
		t.Logf("generation 2 applied on %s %s after its last chunk was written", c, time.Since(x.released[c]).Round(time.Second))
	}
	x.waitSetRolledOut(t)
	for _, c := range []string{"cluster1", "cluster2"} {
		x.expectRuns(t, c, x.second, "at the end")
		framework.Eventually(ctx, t, time.Minute, "the watches of "+c+" to see generation 2", func(context.Context) (bool, error) {
			return true, stateDiff(x.watched(c), x.second.want)
		})
	}
}

// noEarlyChange checks, from the watches, that on each cluster every change
// of the second generation (an object of it, or the removal of one it left
// out) came after its last chunk was written, and that each object changed
// once.
func (x *largeFixture) noEarlyChange(t *testing.T) {
	want := 0
	for key, gen := range x.first.want {
		if x.second.want[key] != gen {
			want++
		}
	}
	for _, c := range []string{"cluster1", "cluster2"} {
		// The agent can verify the generation only once its last chunk
		// exists, so the time it was written bounds every change from
		// below. PayloadStaged's transition time does not: the agent
		// records it in the status it writes after applying.
		bound := x.released[c]
		changes := 0
		var first time.Time
		early := func(key, what string, at time.Time) {
			changes++
			if first.IsZero() || at.Before(first) {
				first = at
			}
			assert.False(t, at.Before(bound), "%s: %s %s at %s, before its last chunk was written at %s",
				c, key, what, at.Format(time.StampMilli), bound.Format(time.StampMilli))
		}
		for i, k := range largeKinds {
			w := x.watches[c][i]
			for _, name := range w.names() {
				key := k.gvk.Kind + "/" + name
				times := w.timesOf(name)
				for j, v := range w.valuesOf(name) {
					if v != x.first.want[key] {
						early(key, "at generation "+v, times[j])
					}
				}
				for _, at := range w.deletionsOf(name) {
					early(key, "deleted", at)
				}
			}
		}
		assert.Equal(t, want, changes, "%s: changes of generation 2 seen, one per object changed or removed", c)
		t.Logf("%s: %d changes of generation 2, the first %s after its last chunk was written",
			c, changes, first.Sub(x.released[c]).Round(time.Millisecond))
	}
}

// except returns the second generation's chunks without skip.
func (x *largeFixture) except(skip payload.Chunk) []payload.Chunk {
	var out []payload.Chunk
	for _, c := range x.second.chunks {
		if c.Name() != skip.Name() {
			out = append(out, c)
		}
	}
	return out
}

// work returns the payload's ManifestWork on cluster.
func (x *largeFixture) work(t *testing.T, cluster string) *workv1.ManifestWork {
	t.Helper()
	mw := &workv1.ManifestWork{}
	require.NoError(t, x.hub.Get(t.Context(), client.ObjectKey{Namespace: cluster, Name: largeName}, mw))
	return mw
}

// updateWork points cluster1's work at the second generation.
func (x *largeFixture) updateWork(t *testing.T) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mw := x.work(t, "cluster1")
		mw.Spec.Workload.Manifests = []workv1.Manifest{x.second.manifest}
		return x.hub.Update(t.Context(), mw)
	}))
}

// waitStaged waits until cluster's work reports PayloadStaged False with
// reason at its generation, the message saying each of says.
func (x *largeFixture) waitStaged(t *testing.T, cluster, reason string, says ...string) {
	t.Helper()
	var last string
	framework.Eventually(t.Context(), t, 2*time.Minute, fmt.Sprintf("the work of %s to report %s %s", cluster, payloadv1alpha1.WorkPayloadStaged, reason), func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := x.hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: largeName}, mw); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mw.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		if c == nil || c.ObservedGeneration != mw.Generation || c.Status != metav1.ConditionFalse || c.Reason != reason {
			return false, nil
		}
		last = c.Message
		for _, s := range says {
			if !strings.Contains(c.Message, s) {
				return false, fmt.Errorf("the message %q does not say %q", c.Message, s)
			}
		}
		return true, nil
	})
	t.Logf("%s: %s %s: %s", cluster, payloadv1alpha1.WorkPayloadStaged, reason, last)
}

// waitApplied waits until cluster's work lists chunks (any, when nil), and
// reports its payload staged and applied at its generation.
func (x *largeFixture) waitApplied(t *testing.T, cluster string, chunks []payloadv1alpha1.ChunkRef, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t.Context(), t, timeout, "the payload's work on "+cluster+" staged and applied", func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := x.hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: largeName}, mw); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if p, err := payload.Of(&mw.Spec); err != nil || p == nil || (chunks != nil && !slices.Equal(p.Spec.Chunks, chunks)) {
			return false, err
		}
		for _, typ := range []string{payloadv1alpha1.WorkPayloadStaged, workv1.WorkApplied} {
			c := meta.FindStatusCondition(mw.Status.Conditions, typ)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != mw.Generation {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitSetRolledOut waits until the set reports its one cluster rolled out
// and available.
func (x *largeFixture) waitSetRolledOut(t *testing.T) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, "ManifestWorkReplicaSet "+largeName+" rolled out", func(ctx context.Context) (bool, error) {
		s := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := x.hub.Get(ctx, client.ObjectKey{Namespace: largeName, Name: largeName}, s); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut) &&
			s.Status.Summary.Total == 1 && s.Status.Summary.Available == 1, nil
	})
}

// state returns the generation label of each of the payload's objects on
// cluster, keyed Kind/name, from a list of their metadata.
func (x *largeFixture) state(ctx context.Context, cluster string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range largeKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		if err := x.managed[cluster].List(ctx, list, client.InNamespace(k.namespace), client.HasLabels{payloadgen.GenerationLabel}); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			out[k.gvk.Kind+"/"+o.Name] = o.Labels[payloadgen.GenerationLabel]
		}
	}
	return out, nil
}

// watched is state as cluster's watches have seen it.
func (x *largeFixture) watched(cluster string) map[string]string {
	out := map[string]string{}
	for i, k := range largeKinds {
		for name, v := range x.watches[cluster][i].current() {
			out[k.gvk.Kind+"/"+name] = v
		}
	}
	return out
}

// expectRuns fails t unless cluster runs generation g whole: every object
// of it, at its generation, and nothing else of the payload.
func (x *largeFixture) expectRuns(t *testing.T, cluster string, g *largeGeneration, when string) {
	t.Helper()
	got, err := x.state(t.Context(), cluster)
	require.NoError(t, err)
	require.NoError(t, stateDiff(got, g.want), "%s %s", cluster, when)
}

// stateDiff says how got differs from want, naming the first few objects;
// nil when they agree.
func stateDiff(got, want map[string]string) error {
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[key]; {
		case !ok:
			diffs = append(diffs, key+" missing")
		case g != want[key]:
			diffs = append(diffs, fmt.Sprintf("%s at generation %s, want %s", key, g, want[key]))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[key]; !ok {
			diffs = append(diffs, key+" is not in the payload")
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	n := len(diffs)
	if n > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("and %d more", n-5))
	}
	return fmt.Errorf("%d objects differ from the generation: %s", n, strings.Join(diffs, "; "))
}
