package replicaset

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// cfgPatch patches data.v of the ConfigMap app/cfg, identified by resource.
func cfgPatch(v string) workv1alpha1.ManifestPatch {
	return workv1alpha1.ManifestPatch{
		ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Resource: "configmaps", Namespace: "app", Name: "cfg"},
		MergePatch:         runtime.RawExtension{Raw: []byte(`{"data":{"v":"` + v + `"}}`)},
	}
}

// values returns data.v of the work of each cluster.
func (s *suite) values(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	works, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list works", err)
	out := map[string]string{}
	for c, mw := range works {
		out[c] = value(t, mw)
	}
	return out
}

// waitValues waits until the works of ns/name hold want by cluster.
func (s *suite) waitValues(t *testing.T, ns, name string, want map[string]string) {
	t.Helper()
	s.poll(t, "override values", func(ctx context.Context) (bool, error) {
		got := s.values(t, ns, name)
		for c, v := range want {
			if got[c] != v {
				return false, nil
			}
		}
		return len(got) == len(want), nil
	})
}

func (s *suite) testOverrides(t *testing.T) {
	const ns, name = "overrides", "ov"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3}})
	mwrs := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "base")
	mwrs.Spec.Overrides = []workv1alpha1.ManifestWorkOverride{
		{ClusterNames: []string{c1}, Patches: []workv1alpha1.ManifestPatch{cfgPatch("named")}},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Patches: []workv1alpha1.ManifestPatch{{
			ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Kind: "ConfigMap", Namespace: "app", Name: "cfg"},
			MergePatch:         runtime.RawExtension{Raw: []byte(`{"data":{"v":"prod"}}`)},
		}}},
	}
	// The API server rejects overrides choosing no cluster, without a resource
	// or kind, or with a patch that is not an object.
	for _, tc := range []struct {
		override workv1alpha1.ManifestWorkOverride
		msg      string
	}{
		{workv1alpha1.ManifestWorkOverride{Patches: []workv1alpha1.ManifestPatch{cfgPatch("x")}}, "must choose clusters with clusterNames or clusterSelector"},
		{workv1alpha1.ManifestWorkOverride{ClusterNames: []string{c1}, Patches: []workv1alpha1.ManifestPatch{{
			ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Name: "cfg"}, MergePatch: runtime.RawExtension{Raw: []byte(`{}`)}}}}, "resource or kind is required"},
		{workv1alpha1.ManifestWorkOverride{ClusterNames: []string{c1}, Patches: []workv1alpha1.ManifestPatch{{
			ResourceIdentifier: cfgPatch("x").ResourceIdentifier, MergePatch: runtime.RawExtension{Raw: []byte(`"text"`)}}}}, "mergePatch"},
	} {
		bad := mwrs.DeepCopy()
		bad.Spec.Overrides = []workv1alpha1.ManifestWorkOverride{tc.override}
		err := s.admin.Create(s.ctx, bad)
		assert.ErrorContains(t, err, tc.msg, "create with override %+v", tc.override)
		assert.True(t, apierrors.IsInvalid(err), "create with override %+v: got %v, want Invalid", tc.override, err)
	}
	kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))
	s.waitValues(t, ns, name, map[string]string{c1: "named", c2: "prod", c3: "base"})

	// A cluster gaining the label gets the override.
	mc := &clusterv1.ManagedCluster{}
	kit.Must(t, "get cluster3", s.admin.Get(s.ctx, client.ObjectKey{Name: c3}, mc))
	base := mc.DeepCopy()
	mc.Labels["env"] = "prod"
	kit.Must(t, "label cluster3", s.admin.Patch(s.ctx, mc, client.MergeFrom(base)))
	s.waitValues(t, ns, name, map[string]string{c1: "named", c2: "prod", c3: "prod"})
	kit.Must(t, "get cluster3", s.admin.Get(s.ctx, client.ObjectKey{Name: c3}, mc))
	base = mc.DeepCopy()
	delete(mc.Labels, "env")
	kit.Must(t, "unlabel cluster3", s.admin.Patch(s.ctx, mc, client.MergeFrom(base)))
	s.waitValues(t, ns, name, map[string]string{c1: "named", c2: "prod", c3: "base"})

	// A bad override, together with a template change: nothing is touched.
	before, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list works", err)
	for _, bad := range []struct {
		patch workv1alpha1.ManifestPatch
		msg   string
	}{
		{workv1alpha1.ManifestPatch{ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Resource: "secrets", Namespace: "app", Name: "cfg"},
			MergePatch: runtime.RawExtension{Raw: []byte(`{"data":{}}`)}}, "no manifest of the template matches core/secrets/app/cfg"},
		{workv1alpha1.ManifestPatch{ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Resource: "configmaps", Namespace: "app", Name: "cfg"},
			MergePatch: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"renamed"}}`)}}, "must not change the apiVersion, kind, name or namespace"},
	} {
		kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKeyFromObject(mwrs), mwrs))
		mwrs.Spec.ManifestWorkTemplate.Workload.Manifests[0] = configMap("changed")
		mwrs.Spec.Overrides = append(mwrs.Spec.Overrides[:2:2], workv1alpha1.ManifestWorkOverride{ClusterNames: []string{"nowhere"}, Patches: []workv1alpha1.ManifestPatch{bad.patch}})
		kit.Must(t, "update with a bad override", s.admin.Update(s.ctx, mwrs))
		m := s.waitStatus(t, ns, name, "InvalidOverride", cond(applied, False, workv1alpha1.ReasonInvalidOverride))
		if c := meta.FindStatusCondition(m.Status.Conditions, applied); !strings.Contains(c.Message, bad.msg) || !strings.Contains(c.Message, "overrides[2].patches[0]") {
			t.Errorf("condition message %q, want it to name overrides[2].patches[0] and contain %q", c.Message, bad.msg)
		}
		after, err := s.works(s.ctx, ns, name)
		kit.Must(t, "list works", err)
		for c, mw := range before {
			if after[c] == nil || after[c].ResourceVersion != mw.ResourceVersion {
				t.Errorf("work of %s changed under an invalid override", c)
			}
		}
	}
	// Fixed: the template change goes out, overrides still applied.
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKeyFromObject(mwrs), mwrs))
	mwrs.Spec.Overrides = mwrs.Spec.Overrides[:1]
	kit.Must(t, "drop the bad override", s.admin.Update(s.ctx, mwrs))
	s.waitValues(t, ns, name, map[string]string{c1: "named", c2: "changed", c3: "changed"})
}

// holdWork adds a finalizer to the work of cluster, as an agent that has
// not cleaned up yet would hold it.
func (s *suite) holdWork(t *testing.T, cluster, name string, hold bool) {
	t.Helper()
	s.poll(t, "finalizer on "+cluster+"/"+name, func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
			return false, err
		}
		if hold {
			controllerutil.AddFinalizer(mw, "test.open-cluster-management.io/agent")
		} else {
			controllerutil.RemoveFinalizer(mw, "test.open-cluster-management.io/agent")
		}
		return true, s.admin.Update(ctx, mw)
	})
}

// gone reports whether get returns NotFound.
func gone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func (s *suite) testCascade(t *testing.T) {
	const ns = "cascade"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	for _, policy := range []workv1alpha1.CascadeDeletionPolicy{workv1alpha1.Background, workv1alpha1.Foreground} {
		name := strings.ToLower(string(policy))
		mwrs := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")
		mwrs.Spec.CascadeDeletionPolicy = policy
		kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))
		s.waitWorks(t, ns, name, c1, c2)
		s.holdWork(t, c1, name, true)
		kit.Must(t, "delete", s.admin.Delete(s.ctx, mwrs))
		s.poll(t, "cluster2's work deleted, cluster1's deleting", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			return len(works) == 1 && works[c1] != nil && !works[c1].DeletionTimestamp.IsZero(), err
		})
		key := client.ObjectKeyFromObject(mwrs)
		if policy == workv1alpha1.Background {
			s.poll(t, "Background: the ManifestWorkReplicaSet goes at once", func(ctx context.Context) (bool, error) {
				return gone(s.admin.Get(ctx, key, &workv1alpha1.ManifestWorkReplicaSet{}))
			})
		} else {
			got := &workv1alpha1.ManifestWorkReplicaSet{}
			kit.Must(t, "Foreground: the ManifestWorkReplicaSet waits", s.admin.Get(s.ctx, key, got))
			if got.DeletionTimestamp.IsZero() {
				t.Error("Foreground ManifestWorkReplicaSet not being deleted")
			}
		}
		s.holdWork(t, c1, name, false)
		s.waitWorks(t, ns, name)
		s.poll(t, "the ManifestWorkReplicaSet is gone", func(ctx context.Context) (bool, error) {
			return gone(s.admin.Get(ctx, key, &workv1alpha1.ManifestWorkReplicaSet{}))
		})
	}
}

// testSeed rolls out with the seed's rolloutStrategy: the mandatory canary
// groups first (west, then east after its 5 m soak), maxConcurrency 25 %.
func (s *suite) testSeed(t *testing.T) {
	const ns, name = "seed", "seed"
	strategy := seedRolloutStrategy(t)
	if strategy.Type != clusterv1alpha1.Progressive || strategy.Progressive == nil || len(strategy.Progressive.MandatoryDecisionGroups.MandatoryDecisionGroups) != 2 {
		t.Fatalf("seed rolloutStrategy %+v", strategy)
	}
	s.placement(t, ns, "placement-aws",
		group{name: "prod-canary-west", clusters: []string{c1}},
		group{name: "prod-canary-east", clusters: []string{c2}},
		group{clusters: []string{c3, c4, "cluster5", "cluster6", "cluster7", "cluster8"}})
	kit.Must(t, "create with the seed's strategy", s.admin.Create(s.ctx, newMWRS(ns, name, "placement-aws", strategy, "v1")))
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, got))
	if p := got.Spec.PlacementRefs[0].RolloutStrategy.Progressive; p.MinSuccessTime.Minutes() != 5 || p.ProgressDeadline != "10m" || p.MaxFailures.IntValue() != 2 {
		t.Errorf("stored strategy %+v", p)
	}
	s.waitWorks(t, ns, name, c1)
	s.report(t, c1, name, True)
	m := s.waitStatus(t, ns, name, "west soaking", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Status.Summary.Available == 1 && cond(rolledOut, False, workv1alpha1.ReasonProgressing)(m)
	})
	if m.Status.Summary.DesiredTotal != 8 {
		t.Errorf("desiredTotal %d, want 8", m.Status.Summary.DesiredTotal)
	}
	s.expectWorks(t, ns, name, c1)
}

// testForeign: a ManifestWork of the same name the ManifestWorkReplicaSet did
// not create is left alone and reported.
func (s *suite) testForeign(t *testing.T) {
	const ns, name = "foreign", "foreign"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	mine := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: name},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("someone else's")}}}}
	kit.Must(t, "create a foreign work", s.admin.Create(s.ctx, mine))
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")))
	s.waitWorks(t, ns, name, c2)
	m := s.waitStatus(t, ns, name, "NotAsExpected", cond(applied, False, workv1alpha1.ReasonNotAsExpected))
	if c := meta.FindStatusCondition(m.Status.Conditions, applied); !strings.Contains(c.Message, "cluster1/foreign exists and is not created by this ManifestWorkReplicaSet") {
		t.Errorf("message %q", c.Message)
	}
	got := &workv1.ManifestWork{}
	kit.Must(t, "get the foreign work", s.admin.Get(s.ctx, client.ObjectKeyFromObject(mine), got))
	if got.ResourceVersion != mine.ResourceVersion {
		t.Error("the foreign work was changed")
	}
}
