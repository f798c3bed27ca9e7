package work

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestSetPayloadThroughTheTunnel runs the work agent of cluster1 against a
// hub whose tunnel server serves the chunks of ManifestWorkReplicaSets: the
// agent applies a set's payload whose chunks are only in the set's
// namespace, and for a work forged in its namespace, naming a set that does
// not place on cluster1, it applies nothing and its PayloadStaged says why.
func TestSetPayloadThroughTheTunnel(t *testing.T) {
	framework.SkipIfShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	s := setup(ctx, t)
	kit.MustCreate(ctx, t, s.hubC, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	hubtest.StartTunnel(ctx, t, s.hub, "")
	s.writeHubSecret(ctx, t, "agent1")
	s.startAgent()

	// Set team/web places work on cluster1; set elsewhere/web on cluster2.
	const set = "web"
	place := func(ns, cluster string, manifests []workv1.Manifest) {
		kit.MustCreate(ctx, t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		kit.MustCreate(ctx, t, s.hubC, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}})
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "p"}}}
		kit.MustCreate(ctx, t, s.hubC, pd)
		pd.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: cluster, Reason: "test"}}
		kit.Must(t, "write decisions", s.hubC.Status().Update(ctx, pd))
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "p"}}}}
		mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = manifests
		kit.MustCreate(ctx, t, s.hubC, mwrs)
	}
	// The work as the set's controller writes it in cluster1's namespace.
	work := func(name, setNS string, manifests []workv1.Manifest) {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name,
			Labels: workv1alpha1.OwnerLabels(setNS, set), Annotations: workv1alpha1.OwnerAnnotations(setNS, set)}}
		w.Spec.Workload.Manifests = manifests
		kit.MustCreate(ctx, t, s.hubC, w)
	}

	t.Run("a set's payload is read from the set's namespace and applied", func(t *testing.T) {
		chunks, _, manifests := splitPayload(t, payloadManifests(t, nil, nil))
		place("team", clusterName, manifests)
		_, err := payload.Write(ctx, s.hubC, "team", chunks)
		require.NoError(t, err)
		work(set, "team", manifests)
		w := s.waitWorkCondition(ctx, t, set, workv1.WorkApplied, metav1.ConditionTrue)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		require.NotNil(t, staged)
		assert.Equal(t, payloadv1alpha1.ReasonPayloadVerified, staged.Reason)
		s.expectPayloadOnCluster(ctx, t, nil, nil)
		have, err := kit.ChunkNames(ctx, s.hubC, clusterName)
		require.NoError(t, err)
		assert.Empty(t, have, "chunks in cluster1's namespace")
	})

	t.Run("a forged work naming a set placed elsewhere is refused, and says why", func(t *testing.T) {
		// Other content, so that the agent has none of its chunks on disk.
		changed := map[int]bool{}
		for i := range payloadConfigMaps {
			changed[i] = true
		}
		chunks, _, manifests := splitPayload(t, payloadManifests(t, changed, nil))
		place("elsewhere", otherName, manifests)
		_, err := payload.Write(ctx, s.hubC, "elsewhere", chunks)
		require.NoError(t, err)
		work("forged", "elsewhere", manifests)
		w := s.waitWorkCondition(ctx, t, "forged", payloadv1alpha1.WorkPayloadStaged, metav1.ConditionFalse)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		assert.Equal(t, payloadv1alpha1.ReasonChunkUnreadable, staged.Reason)
		assert.Contains(t, staged.Message, "names ManifestWorkReplicaSet elsewhere/"+set+", which places no work on cluster "+clusterName)
		assert.Nil(t, meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied), "nothing of the forged work applied")
	})
}
