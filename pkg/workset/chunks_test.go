package workset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// payloadTemplate is a template whose payload is one chunk of content.
func payloadTemplate(t *testing.T, content string) (workv1.ManifestWorkSpec, string) {
	t.Helper()
	m := workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + content + `","namespace":"app"}}`)}}
	ref, chunks, err := payload.Split("app", []workv1.Manifest{m})
	require.NoError(t, err)
	pm, err := payload.Manifest(ref)
	require.NoError(t, err)
	return workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{pm}}}, chunks[0].Name()
}

// revisionOf is a ControllerRevision of set holding template, controlled
// by owner.
func revisionOf(t *testing.T, set string, owner types.UID, name string, template workv1.ManifestWorkSpec) *appsv1.ControllerRevision {
	t.Helper()
	data, _, err := revision.Content{Template: template}.Encode()
	require.NoError(t, err)
	return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name,
		Labels: map[string]string{revision.SetLabel: revision.SetLabelValue(set)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet",
			Name: set, UID: owner, Controller: ptr.To(true)}}},
		Data: runtime.RawExtension{Raw: data}}
}

// TestGrantChunks grants a placed cluster the chunks of the set's template
// and of the revisions the set controls, nothing of a revision it does not
// control, and nothing at all to a cluster no decision names, for a set
// that does not exist, or whose Placement is gone.
func TestGrantChunks(t *testing.T) {
	ctx := context.Background()
	current, inTemplate := payloadTemplate(t, "current")
	kept, inRevision := payloadTemplate(t, "kept")
	foreign, inForeign := payloadTemplate(t, "foreign")
	set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "set-uid"},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: current,
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "p"}}}}
	objects := func(placement bool) []client.Object {
		out := []client.Object{set,
			revisionOf(t, "web", "set-uid", "web-1", kept),
			revisionOf(t, "web", "other-uid", "web-forged", foreign),
			&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p-1",
				Labels: map[string]string{clusterv1beta1.PlacementLabel: "p"}},
				Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "cluster1"}}}},
		}
		if placement {
			out = append(out, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p"}})
		}
		return out
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objects(true)...).Build()

	g, err := GrantChunks(ctx, c, "team", "web", "cluster1")
	require.NoError(t, err)
	require.NotNil(t, g, "cluster1 is placed")
	assert.True(t, g.Lists(inTemplate), "the template's chunk")
	assert.True(t, g.Lists(inRevision), "a kept revision's chunk")
	assert.False(t, g.Lists(inForeign), "a chunk of a revision the set does not control")

	for name, tt := range map[string]struct {
		c            client.Client
		set, cluster string
	}{
		"a cluster no decision names": {c, "web", "cluster2"},
		"a set that does not exist":   {c, "absent", "cluster1"},
		"a Placement that is gone":    {fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objects(false)...).Build(), "web", "cluster1"},
	} {
		g, err := GrantChunks(ctx, tt.c, "team", tt.set, tt.cluster)
		require.NoError(t, err, name)
		assert.Nil(t, g, name)
	}
}
