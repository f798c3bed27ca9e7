package work

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

const (
	// payloadNS is the namespace of the large payload's ConfigMaps.
	payloadNS = "payload"
	// payloadConfigMaps ConfigMaps of payloadCMSize bytes each: 8 MiB,
	// sixteen times what one ManifestWork can hold.
	payloadConfigMaps = 100
	payloadCMSize     = 80 << 10
)

// payloadManifests is the Namespace and the ConfigMaps of a large payload;
// the ConfigMaps whose index is in changed hold other data, and those in
// dropped are left out.
func payloadManifests(t *testing.T, changed, dropped map[int]bool) []workv1.Manifest {
	t.Helper()
	out := toManifests(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+payloadNS+"\n")
	for i := range payloadConfigMaps {
		if dropped[i] {
			continue
		}
		seed := fmt.Sprintf("cm-%03d", i)
		if changed[i] {
			seed += "-changed"
		}
		value := strings.Repeat(seed+";", payloadCMSize/(len(seed)+1))
		raw, err := json.Marshal(&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: payloadNS, Name: fmt.Sprintf("cm-%03d", i)},
			Data:       map[string]string{"seed": seed, "value": value},
		})
		require.NoError(t, err)
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return out
}

// splitPayload splits manifests into chunks and returns them and the one
// manifest that stands for them in a work.
func splitPayload(t *testing.T, manifests []workv1.Manifest) ([]payload.Chunk, *payloadv1alpha1.ManifestPayload, []workv1.Manifest) {
	t.Helper()
	ref, chunks, err := payload.Split("app", manifests)
	require.NoError(t, err)
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	return chunks, ref, []workv1.Manifest{m}
}

// TestLargePayload delivers payloads larger than a ManifestWork can hold as
// ManifestChunks, checks that a generation is applied only complete and
// verified, and that small works keep OCM's form.
func TestLargePayload(t *testing.T) {
	framework.SkipIfShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s := setup(ctx, t)
	s.writeHubSecret(ctx, t, "agent1")
	s.startAgent()
	const name = "large"

	t.Run("a payload of many MiB is applied", func(t *testing.T) {
		chunks, ref, manifests := splitPayload(t, payloadManifests(t, nil, nil))
		require.Greater(t, ref.Spec.Size, int64(16*workv1.DefaultManifestsSizeLimit))
		written, err := payload.Write(ctx, s.hubC, clusterName, chunks)
		require.NoError(t, err)
		t.Logf("payload of %d manifests, %d bytes in %d chunks, stored as %d bytes", ref.Spec.Manifests, ref.Spec.Size, len(chunks), written.StoredBytes)
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}
		w.Spec.Workload.Manifests = manifests
		kit.MustCreate(ctx, t, s.hubC, w)

		w = s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, metav1.ConditionTrue)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		require.NotNil(t, staged)
		assert.Equal(t, payloadv1alpha1.ReasonPayloadVerified, staged.Reason)
		assert.Contains(t, staged.Message, fmt.Sprintf("all %d chunks", len(chunks)))
		assert.Len(t, w.Status.ResourceStatus.Manifests, payloadConfigMaps+1)
		s.expectPayloadOnCluster(ctx, t, nil, nil)
	})

	t.Run("an incomplete generation is never applied", func(t *testing.T) {
		// Generation 2 changes 1 % of the ConfigMaps and drops another.
		changed, dropped := map[int]bool{42: true}, map[int]bool{7: true}
		chunks, ref, manifests := splitPayload(t, payloadManifests(t, changed, dropped))
		var missing []payload.Chunk
		present := 0
		for _, c := range chunks {
			if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: c.Name()}, &payloadv1alpha1.ManifestChunk{}); apierrors.IsNotFound(err) {
				missing = append(missing, c)
			} else {
				present++
			}
		}
		require.NotEmpty(t, missing)
		var missingBytes int64
		for _, c := range missing {
			missingBytes += c.Ref.Size
		}
		t.Logf("the 1 %% change needs %d of %d chunks again: %d of %d bytes (%.2f %%)",
			len(missing), len(chunks), missingBytes, ref.Spec.Size, 100*float64(missingBytes)/float64(ref.Spec.Size))
		assert.Less(t, float64(missingBytes)/float64(ref.Spec.Size), 0.03, "a 1 %% change rewrites about 1 %% of the payload")

		s.updateWork(ctx, t, name, func(w *workv1.ManifestWork) { w.Spec.Workload.Manifests = manifests })
		w := s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionFalse)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		assert.Equal(t, payloadv1alpha1.ReasonChunksMissing, staged.Reason)
		assert.Contains(t, staged.Message, fmt.Sprintf("%d of %d chunks", present, len(chunks)))
		assert.Contains(t, staged.Message, "the cluster keeps generation 1")
		// While chunks are missing the cluster runs generation 1, whole.
		framework.Consistently(ctx, t, 3*time.Second, "generation 1 on the cluster", func(ctx context.Context) (bool, error) {
			return true, s.payloadOnCluster(ctx, nil, nil)
		})

		written, err := payload.Write(ctx, s.hubC, clusterName, missing)
		require.NoError(t, err)
		assert.Equal(t, int64(len(missing)), written.Chunks)
		s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionTrue)
		s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, metav1.ConditionTrue)
		framework.Eventually(ctx, t, pollTimeout, "generation 2 on the cluster", func(ctx context.Context) (bool, error) {
			return s.payloadOnCluster(ctx, changed, dropped) == nil, nil
		})
	})

	t.Run("a tampered chunk is refused", func(t *testing.T) {
		changed := map[int]bool{3: true}
		chunks, _, manifests := splitPayload(t, payloadManifests(t, changed, nil))
		var fresh []payload.Chunk
		for _, c := range chunks {
			if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: c.Name()}, &payloadv1alpha1.ManifestChunk{}); apierrors.IsNotFound(err) {
				fresh = append(fresh, c)
			}
		}
		require.NotEmpty(t, fresh)
		// The first new chunk is written with other content under its name.
		bad, err := payload.Object(clusterName, fresh[0])
		require.NoError(t, err)
		bad.Spec.Encoding, bad.Spec.Data = payloadv1alpha1.EncodingIdentity, []byte(strings.Replace(string(fresh[0].Data), "cm-003-changed", "cm-003-tampers", 1))
		kit.MustCreate(ctx, t, s.hubC, bad)
		_, err = payload.Write(ctx, s.hubC, clusterName, fresh[1:])
		require.NoError(t, err)
		s.updateWork(ctx, t, name, func(w *workv1.ManifestWork) { w.Spec.Workload.Manifests = manifests })

		w := s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionFalse)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		assert.Equal(t, payloadv1alpha1.ReasonChunkDigestMismatch, staged.Reason)
		assert.Contains(t, staged.Message, fresh[0].Name())
		assert.Contains(t, staged.Message, "delete it and write it again")
		framework.Consistently(ctx, t, 2*time.Second, "generation 2 on the cluster", func(ctx context.Context) (bool, error) {
			return true, s.payloadOnCluster(ctx, map[int]bool{42: true}, map[int]bool{7: true})
		})

		// Writing the payload again replaces the damaged chunk.
		written, err := payload.Write(ctx, s.hubC, clusterName, chunks)
		require.NoError(t, err)
		assert.Equal(t, int64(1), written.Chunks)
		s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionTrue)
		framework.Eventually(ctx, t, pollTimeout, "generation 3 on the cluster", func(ctx context.Context) (bool, error) {
			return s.payloadOnCluster(ctx, changed, nil) == nil, nil
		})
	})

	t.Run("an agent stopped mid-transfer leaves the previous generation whole", func(t *testing.T) {
		// The agent reads the hub slowly: a pass over the payload's 100
		// chunks takes about 20 s.
		s.stop()
		s.stop = agenttest.StartWorkAgent(s.root, s.spoke, workagent.Options{Namespace: agentNS, HubQPS: 5, HubBurst: 1})
		// Generation 4 changes every ConfigMap but one, so that any of it
		// applied would show.
		all := map[int]bool{}
		for i := range payloadConfigMaps {
			all[i] = true
		}
		chunks, _, manifests := splitPayload(t, payloadManifests(t, all, nil))
		last := chunks[len(chunks)-1]
		_, err := payload.Write(ctx, s.hubC, clusterName, chunks[:len(chunks)-1])
		require.NoError(t, err)
		s.updateWork(ctx, t, name, func(w *workv1.ManifestWork) { w.Spec.Workload.Manifests = manifests })
		w := s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionFalse)
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		assert.Contains(t, staged.Message, fmt.Sprintf("%d of %d chunks", len(chunks)-1, len(chunks)))
		assert.Contains(t, staged.Message, "the cluster keeps generation 3")

		// The last chunk arrives while the agent is reading the others
		// again, and the agent stops before it is through.
		_, err = payload.Write(ctx, s.hubC, clusterName, []payload.Chunk{last})
		require.NoError(t, err)
		s.stop()
		require.NoError(t, s.payloadOnCluster(ctx, map[int]bool{3: true}, nil), "the cluster runs generation 3, whole")

		s.startAgent()
		s.waitWorkCondition(ctx, t, name, payloadv1alpha1.WorkPayloadStaged, metav1.ConditionTrue)
		s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, metav1.ConditionTrue)
		framework.Eventually(ctx, t, pollTimeout, "generation 4 on the cluster", func(ctx context.Context) (bool, error) {
			return s.payloadOnCluster(ctx, all, nil) == nil, nil
		})
	})

	t.Run("an agent reads its own cluster's chunks only and writes none", func(t *testing.T) {
		agent, err := client.New(s.agentConfig(t, clusterName, "agent1"), client.Options{Scheme: apis.Scheme})
		require.NoError(t, err)
		chunks, _, _ := splitPayload(t, payloadManifests(t, nil, nil))
		_, err = payload.Write(ctx, s.hubC, otherName, chunks[:1])
		require.NoError(t, err)
		key := types.NamespacedName{Name: chunks[0].Name()}

		key.Namespace = clusterName
		require.NoError(t, agent.Get(ctx, key, &payloadv1alpha1.ManifestChunk{}))
		key.Namespace = otherName
		err = agent.Get(ctx, key, &payloadv1alpha1.ManifestChunk{})
		assert.True(t, apierrors.IsForbidden(err), "get another cluster's chunk: %v", err)
		require.NoError(t, agent.List(ctx, &payloadv1alpha1.ManifestChunkList{}, client.InNamespace(clusterName)), "list its own chunks")
		err = agent.List(ctx, &payloadv1alpha1.ManifestChunkList{}, client.InNamespace(otherName))
		assert.True(t, apierrors.IsForbidden(err), "list another cluster's chunks: %v", err)
		obj, err := payload.Object(clusterName, payload.Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: payload.Digest([]byte("x\n")), Size: 2}, Data: []byte("x\n")})
		require.NoError(t, err)
		err = agent.Create(ctx, obj)
		assert.True(t, apierrors.IsForbidden(err), "create a chunk: %v", err)
		err = agent.Delete(ctx, &payloadv1alpha1.ManifestChunk{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: chunks[0].Name()}})
		assert.True(t, apierrors.IsForbidden(err), "delete a chunk: %v", err)
	})

	t.Run("a chunk not named by its digest is refused by the hub", func(t *testing.T) {
		obj, err := payload.Object(clusterName, payload.Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: payload.Digest([]byte("y\n")), Size: 2}, Data: []byte("y\n")})
		require.NoError(t, err)
		obj.Name = "my-chunk"
		require.ErrorContains(t, s.hubC.Create(ctx, obj), "a ManifestChunk is named sha256-<the 64 hex digits")
	})

	t.Run("the hub refuses a ManifestPayload beside other manifests or over the limits", func(t *testing.T) {
		_, ref, manifests := splitPayload(t, payloadManifests(t, nil, nil))
		over := *ref
		over.Spec.Size = payloadv1alpha1.MaxPayloadSize + 1
		overManifest, err := payload.Manifest(&over)
		require.NoError(t, err)
		for _, tt := range []struct {
			name      string
			manifests []workv1.Manifest
			wantErr   string
		}{
			{"beside a ConfigMap", append(toManifests(t, configMap("default", "beside", "1")), manifests...),
				"a ManifestPayload must be the only manifest of its work, and this one holds 2"},
			{"over 256 MiB", []workv1.Manifest{overManifest}, "at most 268435456 bytes (spec.size, 256 MiB)"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "refused"}}
				w.Spec.Workload.Manifests = tt.manifests
				require.ErrorContains(t, s.hubC.Create(ctx, w), tt.wantErr)
			})
		}
	})

	t.Run("kubectl ocm work create delivers a large payload", func(t *testing.T) {
		// work create checks that the cluster is accepted.
		kit.MustCreate(ctx, t, s.hubC, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
		dir := t.TempDir()
		for i := range 12 {
			cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli-%02d\n  namespace: default\ndata:\n  v: %q\n",
				i, strings.Repeat(fmt.Sprintf("cli-%02d;", i), (64<<10)/7))
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("cm-%02d.yaml", i)), []byte(cm), 0o600))
		}
		r := s.ocm.Run(ctx, "work", "create", "cli-large", "-f", dir, "--clusters", clusterName)
		require.NoError(t, r.Err, r.ErrOut)
		assert.Contains(t, r.Out, "Payload of cli-large: 12 chunks written to namespace "+clusterName)
		assert.Contains(t, r.Out, "ManifestWork cli-large created in cluster "+clusterName)
		s.waitWorkCondition(ctx, t, "cli-large", workv1.WorkApplied, metav1.ConditionTrue)
		cm, err := s.configMap(ctx, "default", "cli-11")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(cm.Data["v"], "cli-11;"))

		// Again with --overwrite: every chunk is there already.
		r = s.ocm.Run(ctx, "work", "create", "cli-large", "-f", dir, "--clusters", clusterName, "--overwrite")
		require.NoError(t, r.Err, r.ErrOut)
		assert.Contains(t, r.Out, "0 chunks written to namespace "+clusterName+" (0.0 MiB, 0.0 MiB stored), 12 already on the hub")
	})

	t.Run("kubectl ocm work diff compares the manifests of two large payloads", func(t *testing.T) {
		// cli-05 changes and cli-11 leaves: the agent stages the new payload
		// and reports each of its manifests.
		dir := t.TempDir()
		for i := range 11 {
			seed := fmt.Sprintf("cli-%02d;", i)
			if i == 5 {
				seed = "cli-05-changed;"
			}
			cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cli-%02d\n  namespace: default\ndata:\n  v: %q\n",
				i, strings.Repeat(seed, (64<<10)/7))
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("cm-%02d.yaml", i)), []byte(cm), 0o600))
		}
		r := s.ocm.Run(ctx, "work", "diff", "cli-large", "-f", dir, "--clusters", clusterName)
		require.Error(t, r.Err, "the new manifests differ: exit 1\n%s", r.ErrOut)
		for _, want := range []string{"# " + clusterName + ": 2 of 12 manifests change", "--- live/ConfigMap default/cli-05",
			"Deleted ConfigMap default/cli-11: the new manifests leave it out"} {
			assert.Contains(t, r.Out, want)
		}
		assert.NotContains(t, r.Out, "ManifestPayload")
		cm, err := s.configMap(ctx, "default", "cli-05")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(cm.Data["v"], "cli-05;"), "a diff changes nothing")
	})

	t.Run("a small work keeps OCM's form", func(t *testing.T) {
		w := newWork(t, "small", configMap("default", "small", "1"))
		sent, err := json.Marshal(w.Spec)
		require.NoError(t, err)
		kit.MustCreate(ctx, t, s.hubC, w)
		w = s.waitWorkCondition(ctx, t, "small", workv1.WorkApplied, metav1.ConditionTrue)
		stored, err := json.Marshal(w.Spec)
		require.NoError(t, err)
		assert.JSONEq(t, string(sent), string(stored))
		for _, c := range w.Status.Conditions {
			assert.NotEqual(t, payloadv1alpha1.WorkPayloadStaged, c.Type, "a small work has OCM's conditions only")
		}
	})
}

// expectPayloadOnCluster fails t unless the cluster runs the payload of
// payloadManifests(changed, dropped).
func (s *suite) expectPayloadOnCluster(ctx context.Context, t *testing.T, changed, dropped map[int]bool) {
	t.Helper()
	require.NoError(t, s.payloadOnCluster(ctx, changed, dropped))
}

// payloadOnCluster says how the cluster's ConfigMaps differ from the payload
// of payloadManifests(changed, dropped): nil when they are that payload.
func (s *suite) payloadOnCluster(ctx context.Context, changed, dropped map[int]bool) error {
	list := &corev1.ConfigMapList{}
	if err := s.spokeC.List(ctx, list, client.InNamespace(payloadNS)); err != nil {
		return err
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			got[cm.Name] = cm.Data["seed"]
		}
	}
	want := map[string]string{}
	for i := range payloadConfigMaps {
		if dropped[i] {
			continue
		}
		seed := fmt.Sprintf("cm-%03d", i)
		if changed[i] {
			seed += "-changed"
		}
		want[seed[:6]] = seed
	}
	for name, seed := range want {
		if got[name] != seed {
			return fmt.Errorf("ConfigMap %s/%s holds seed %q, want %q", payloadNS, name, got[name], seed)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			return fmt.Errorf("ConfigMap %s/%s is on the cluster, and not in the payload", payloadNS, name)
		}
	}
	return nil
}
