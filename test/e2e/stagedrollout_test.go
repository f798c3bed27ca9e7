package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestStagedRolloutDiffUndo drives a ManifestWorkReplicaSet's second
// version through the CLI on the shared fleet, whose agents and hub
// controller run as Pods: `work diff` shows what it would change on both
// clusters and changes nothing; the rollout in stages of one cluster waits
// at each gate until `work rollout approve` opens it, one cluster at a time;
// `work rollout undo` brings the first version back through the same gates.
// An approval of a stage that does not exist and an undo to a revision that
// is not kept are refused.
func TestStagedRolloutDiffUndo(t *testing.T) {
	f := sharedFleet(t)
	hub := f.env.Cluster("hub").Client()
	managed := map[string]client.Client{"cluster1": f.env.Cluster("cluster1").Client(), "cluster2": f.env.Cluster("cluster2").Client()}
	ctx := t.Context()
	const ns = "staged"
	require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	f.ocm(t, "clusterset", "bind", "default", "--namespace", ns, "--context", "hub")
	f.ocm(t, "placement", "create", "all", "-n", ns, "--context", "hub")
	framework.Eventually(t.Context(), t, time.Minute, "placement all to select cluster1 and cluster2", func(ctx context.Context) (bool, error) {
		got, err := framework.DecidedClusters(ctx, hub, ns, "all")
		return slices.Equal(got, []string{"cluster1", "cluster2"}), err
	})
	t.Cleanup(func() {
		_, _ = f.quietOCM(context.Background(), "work", "delete", "staged", "--replicaset", "-n", ns, "--context", "hub")
		_ = hub.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})

	dir := t.TempDir()
	version := func(v string) string {
		p := filepath.Join(dir, v+".yaml")
		require.NoError(t, os.WriteFile(p, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: staged\n  namespace: default\ndata:\n  version: "+v+"\n"), 0o600))
		return p
	}
	versions := func(ctx context.Context) (map[string]string, error) {
		out := map[string]string{}
		for name, c := range managed {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "staged"}, cm); err != nil {
				return nil, err
			}
			out[name] = cm.Data["version"]
		}
		return out, nil
	}
	waitVersions := func(what string, want map[string]string) {
		t.Helper()
		framework.Eventually(t.Context(), t, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
			got, err := versions(ctx)
			if err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for c, v := range want {
				if got[c] != v {
					return false, nil
				}
			}
			return true, nil
		})
	}
	waitingAt := func(stage string) {
		t.Helper()
		framework.Eventually(t.Context(), t, time.Minute, "the rollout waiting for approval before "+stage, func(ctx context.Context) (bool, error) {
			s := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "staged"}, s); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
			return c != nil && c.Reason == "AwaitingApproval" && strings.Contains(c.Message, "before stage "+stage), nil
		})
	}
	rollout := []string{"--placement", ns + "/all", "--rollout", "Progressive", "--max-concurrency", "1", "--context", "hub"}

	f.ocm(t, append([]string{"work", "create", "staged", "-f", version("v1")}, rollout...)...)
	waitVersions("v1 on both clusters", map[string]string{"cluster1": "v1", "cluster2": "v1"})
	waitRolledOut(t, hub, ns, "staged")

	// The diff: both clusters would change the same way; nothing changes.
	out, err := f.tryOCM(t, "work", "diff", "staged", "--replicaset", "-n", ns, "-f", version("v2"), "--context", "hub")
	require.Error(t, err, "work diff exits 1 when something would change")
	require.Contains(t, out, "# cluster1, cluster2: 1 of 1 manifests change")
	require.Contains(t, out, "-  version: v1")
	require.Contains(t, out, "+  version: v2")
	got, err := versions(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cluster1": "v1", "cluster2": "v1"}, got, "the diff changed a cluster")
	out = f.ocm(t, "work", "diff", "staged", "--replicaset", "-n", ns, "-f", version("v1"), "--context", "hub")
	require.Contains(t, out, "no change")

	// The second version, one cluster per stage, each stage gated.
	f.ocm(t, append([]string{"work", "create", "staged", "-f", version("v2"), "--gates", "Before", "--stage-size", "1", "--overwrite"}, rollout...)...)
	waitingAt("batch-1")
	require.Contains(t, f.ocm(t, "work", "rollout", "status", "staged", "-n", ns, "--context", "hub"), "waits for approval before stage batch-1")
	out, err = f.tryOCM(t, "work", "rollout", "approve", "staged", "-n", ns, "--stage", "batch-9", "--context", "hub")
	require.Error(t, err)
	require.Contains(t, out, `stage "batch-9" does not exist`)
	got, err = versions(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cluster1": "v1", "cluster2": "v1"}, got, "a cluster changed before its gate opened")

	f.ocm(t, "work", "rollout", "approve", "staged", "-n", ns, "--context", "hub")
	waitingAt("batch-2")
	framework.Eventually(t.Context(), t, 2*time.Minute, "one cluster at v2", func(ctx context.Context) (bool, error) {
		got, err := versions(ctx)
		return err == nil && (got["cluster1"] == "v2") != (got["cluster2"] == "v2"), err
	})
	f.ocm(t, "work", "rollout", "approve", "staged", "-n", ns, "--stage", "batch-2", "--message", "the first looks fine", "--context", "hub")
	waitVersions("v2 on both clusters", map[string]string{"cluster1": "v2", "cluster2": "v2"})
	waitRolledOut(t, hub, ns, "staged")

	// Back to revision 1 through the same gates; a revision not kept is
	// refused.
	out, err = f.tryOCM(t, "work", "rollout", "undo", "staged", "-n", ns, "--to-revision", "9", "--context", "hub")
	require.Error(t, err)
	require.Contains(t, out, "revision 9 of ManifestWorkReplicaSet staged/staged is not kept")
	f.ocm(t, "work", "rollout", "history", "staged", "-n", ns, "--context", "hub")
	f.ocm(t, "work", "rollout", "undo", "staged", "-n", ns, "--context", "hub")
	waitingAt("batch-1")
	f.ocm(t, "work", "rollout", "approve", "staged", "-n", ns, "--stage", "batch-1", "--context", "hub")
	f.ocm(t, "work", "rollout", "approve", "staged", "-n", ns, "--stage", "batch-2", "--context", "hub")
	waitVersions("v1 on both clusters again", map[string]string{"cluster1": "v1", "cluster2": "v1"})
	waitRolledOut(t, hub, ns, "staged")
}
