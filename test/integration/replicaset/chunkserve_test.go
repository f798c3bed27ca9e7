package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// chunkAnswer is the hub's answer to a chunk request: its status code, and
// the chunk or the refusal's message.
type chunkAnswer struct {
	code    int
	chunk   *payloadv1alpha1.ManifestChunk
	message string
}

// readChunk asks the hub's API server, as cfg's user, for the chunk of
// cluster's ManifestWork work through the hub tunnel's server.
func readChunk(ctx context.Context, t *testing.T, cfg *rest.Config, cluster, work, chunk string) chunkAnswer {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+hubtunnel.ChunkPath(cluster, work, chunk), nil)
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	a := chunkAnswer{code: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		a.chunk = &payloadv1alpha1.ManifestChunk{}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(a.chunk))
		return a
	}
	status := &metav1.Status{}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(status))
	a.message = status.Message
	return a
}

// otherTemplate is a payload of 4 ConfigMaps that shares no chunk with
// largeTemplate's: its chunks and the one manifest that stands for them.
func otherTemplate(t *testing.T) ([]payload.Chunk, workv1.Manifest) {
	t.Helper()
	manifests := make([]workv1.Manifest, 4)
	for i := range manifests {
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other-%d","namespace":"app"},"data":{"v":%q}}`,
			i, strings.Repeat("other", (64<<10)/5))
		manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}
	}
	ref, chunks, err := payload.Split("app", manifests)
	require.NoError(t, err)
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	return chunks, m
}

// TestSetChunksServedToPlacedAgents delivers a set's payload with one copy
// of its chunks, in the set's namespace: the clusters' namespaces get none,
// and the hub tunnel's server hands a chunk to a cluster's agent (its
// certificate and its token identity) only while the set places work on
// that cluster and its template or a revision it keeps lists the chunk.
// Every refusal names why and says nothing of whether the chunk exists.
func TestSetChunksServedToPlacedAgents(t *testing.T) {
	framework.SkipIfShort(t)
	s := setup(t)
	for _, c := range []string{c1, c2} {
		kit.Must(t, "create namespace "+c, s.admin.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}}))
		kit.Must(t, "accept "+c, s.admin.Create(s.ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}))
	}
	hubtest.StartTunnel(s.ctx, t, s.hub, "")

	// Set "served/app" places work on cluster1; set "other/other-app", whose
	// payload shares no chunk with it, on cluster2.
	const ns, name, otherNS, otherName = "served", "app", "other", "other-app"
	s.placement(t, ns, "p", group{clusters: []string{c1}})
	s.placement(t, otherNS, "p", group{clusters: []string{c2}})
	chunks, m := largeTemplate(t, -1)
	_, err := payload.Write(s.ctx, s.admin, ns, chunks)
	require.NoError(t, err)
	mwrs := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "")
	mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{m}
	kit.Must(t, "create set", s.admin.Create(s.ctx, mwrs))
	otherChunks, otherM := otherTemplate(t)
	_, err = payload.Write(s.ctx, s.admin, otherNS, otherChunks)
	require.NoError(t, err)
	other := newMWRS(otherNS, otherName, "p", clusterv1alpha1.RolloutStrategy{}, "")
	other.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{otherM}
	kit.Must(t, "create the other set", s.admin.Create(s.ctx, other))
	s.waitWorks(t, ns, name, c1)

	agentCert := func(cluster string) *rest.Config {
		cfg, err := s.hub.ConfigForUser(identity.AgentUserName(cluster, "agent-1"), identity.AgentGroups(cluster)...)
		require.NoError(t, err)
		return cfg
	}
	agent1, agent2 := agentCert(c1), agentCert(c2)
	// The token identity of cluster1's agent, as the hub creates it for a
	// cluster registered with the token driver.
	kit.Must(t, "create the token identity of "+c1, s.admin.Create(s.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(c1)}}))
	agent1Token, err := s.hub.ConfigForServiceAccount(s.ctx, identity.AgentTokenNamespace, identity.AgentTokenServiceAccount(c1), time.Hour)
	require.NoError(t, err)

	t.Run("the clusters' namespaces get no chunk", func(t *testing.T) {
		for _, c := range []string{c1, c2} {
			have, err := kit.ChunkNames(s.ctx, s.admin, c)
			require.NoError(t, err)
			assert.Empty(t, have, "chunks in %s's namespace", c)
		}
	})

	t.Run("cluster1's agent reads a chunk of its work", func(t *testing.T) {
		for what, cfg := range map[string]*rest.Config{"certificate": agent1, "token": agent1Token} {
			var a chunkAnswer
			// The aggregated API may take a moment to trust a new identity's
			// grants; a refusal here would fail the wait with its message.
			framework.Eventually(s.ctx, t, pollTimeout, "cluster1's agent ("+what+") reading "+chunks[0].Name(), func(ctx context.Context) (bool, error) {
				a = readChunk(ctx, t, cfg, c1, name, chunks[0].Name())
				return a.code == http.StatusOK, nil
			})
			data, err := payload.Decode(a.chunk, chunks[0].Ref)
			require.NoError(t, err, "the %s identity's chunk", what)
			assert.Equal(t, chunks[0].Data, data)
			assert.Empty(t, a.chunk.Namespace, "the answer names no namespace")
		}
	})

	// hold is a finalizer that keeps a ManifestWork while a test reads
	// through it; release removes it when the test ends.
	const hold = "test.kubectl-ocm.io/hold"
	release := func(t *testing.T, cluster, work string) {
		t.Cleanup(func() {
			mw := &workv1.ManifestWork{}
			if err := s.admin.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: work}, mw); err == nil {
				mw.Finalizers = nil
				_ = s.admin.Update(context.Background(), mw)
			}
		})
	}

	refused := func(t *testing.T, cfg *rest.Config, cluster, work, chunk string, code int, parts ...string) string {
		t.Helper()
		a := readChunk(s.ctx, t, cfg, cluster, work, chunk)
		assert.Equal(t, code, a.code, "answer %q", a.message)
		for _, p := range parts {
			assert.Contains(t, a.message, p)
		}
		return a.message
	}

	t.Run("refused", func(t *testing.T) {
		// cluster2's agent, for cluster1's work: not its agent identity.
		refused(t, agent2, c1, name, chunks[0].Name(), http.StatusForbidden, "only the agent of cluster "+c1, "is not its agent identity")
		// cluster2 has no work of the set.
		refused(t, agent2, c2, name, chunks[0].Name(), http.StatusNotFound, "cluster "+c2+" has no ManifestWork "+name)
		// A digest the set does not list, whether or not it exists.
		unlisted := otherChunks[0].Name()
		refused(t, agent1, c1, name, unlisted, http.StatusForbidden, "lists no chunk "+unlisted)
		absent := payload.ChunkName(payload.Digest([]byte("absent\n")))
		refused(t, agent1, c1, name, absent, http.StatusForbidden, "lists no chunk "+absent)
		// A work that no set wrote.
		plain := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: "plain"}, Spec: mwrs.Spec.ManifestWorkTemplate}
		kit.Must(t, "create a work of no set", s.admin.Create(s.ctx, plain))
		refused(t, agent1, c1, "plain", chunks[0].Name(), http.StatusForbidden, "was not written by a ManifestWorkReplicaSet")
	})

	t.Run("a forged work in cluster1's namespace reads nothing of a set that does not place on cluster1", func(t *testing.T) {
		// An editor of cluster1's namespace writes works claiming the other
		// namespace's set (placed on cluster2 only) and a set that does not
		// exist: the answers are alike, and name no chunk's existence.
		// The other set's controller deletes a work of its own on a
		// cluster it does not place on: a finalizer keeps the forged one.
		forge := func(workName, setNS, set string) {
			mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c1, Name: workName,
				Labels: workv1alpha1.OwnerLabels(setNS, set), Annotations: workv1alpha1.OwnerAnnotations(setNS, set),
				Finalizers: []string{hold}},
				Spec: other.Spec.ManifestWorkTemplate}
			kit.Must(t, "forge "+workName, s.admin.Create(s.ctx, mw))
			release(t, c1, workName)
		}
		forge("forged", otherNS, otherName)
		forge("forged-absent", otherNS, "absent")
		msg := refused(t, agent1, c1, "forged", otherChunks[0].Name(), http.StatusForbidden,
			"names ManifestWorkReplicaSet "+otherNS+"/"+otherName+", which places no work on cluster "+c1)
		absentMsg := refused(t, agent1, c1, "forged-absent", otherChunks[0].Name(), http.StatusForbidden,
			"names ManifestWorkReplicaSet "+otherNS+"/absent, which places no work on cluster "+c1)
		assert.Equal(t, strings.ReplaceAll(msg, "forged", "X"), strings.ReplaceAll(strings.ReplaceAll(absentMsg, "forged-absent", "X"), "/absent", "/"+otherName),
			"an existing set and an absent one are refused alike")
		// The other set's own cluster reads it.
		framework.Eventually(s.ctx, t, pollTimeout, "cluster2's agent reading the other set's chunk", func(ctx context.Context) (bool, error) {
			return readChunk(ctx, t, agent2, c2, otherName, otherChunks[0].Name()).code == http.StatusOK, nil
		})
	})

	t.Run("a chunk only a kept revision lists is served", func(t *testing.T) {
		next, m2 := largeTemplate(t, 17)
		_, err := payload.Write(s.ctx, s.admin, ns, next)
		require.NoError(t, err)
		s.poll(t, "update the template", func(ctx context.Context) (bool, error) {
			if err := s.admin.Get(ctx, client.ObjectKeyFromObject(mwrs), mwrs); err != nil {
				return false, err
			}
			mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{m2}
			return true, s.admin.Update(ctx, mwrs)
		})
		old := chunks[17].Name()
		p2, err := payload.Of(&workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m2}}})
		require.NoError(t, err)
		for _, ref := range p2.Spec.Chunks {
			require.NotEqual(t, old, payload.ChunkName(ref.Digest), "the new template lists the old chunk")
		}
		s.poll(t, "the new template's work on cluster1", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || works[c1] == nil {
				return false, err
			}
			p, err := payload.Of(&works[c1].Spec)
			return err == nil && p != nil && slices.Equal(p.Spec.Chunks, p2.Spec.Chunks), err
		})
		// Past the grant's lifetime, read anew from the set's revisions.
		framework.Eventually(s.ctx, t, pollTimeout, "cluster1's agent reading "+old+", listed by revision 1 only", func(ctx context.Context) (bool, error) {
			a := readChunk(ctx, t, agent1, c1, name, old)
			return a.code == http.StatusOK, nil
		})
		have, err := kit.ChunkNames(s.ctx, s.admin, c1)
		require.NoError(t, err)
		assert.Empty(t, have, "chunks in cluster1's namespace after the new template")
	})

	t.Run("a set that no longer places on cluster1 serves it nothing", func(t *testing.T) {
		// A finalizer (as an agent's) keeps cluster1's work while the set
		// deletes it, so that the refusal is the set's decision, not a
		// work gone.
		s.poll(t, "hold cluster1's work", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || works[c1] == nil {
				return false, err
			}
			works[c1].Finalizers = append(works[c1].Finalizers, hold)
			return true, s.admin.Update(ctx, works[c1])
		})
		release(t, c1, name)
		require.Equal(t, http.StatusOK, readChunk(s.ctx, t, agent1, c1, name, chunks[0].Name()).code)
		s.decisions(t, ns, "p", group{clusters: []string{c2}})
		var a chunkAnswer
		framework.Eventually(s.ctx, t, pollTimeout, "cluster1's agent refused", func(ctx context.Context) (bool, error) {
			a = readChunk(ctx, t, agent1, c1, name, chunks[0].Name())
			return a.code != http.StatusOK, nil
		})
		assert.Equal(t, http.StatusForbidden, a.code, a.message)
		assert.Contains(t, a.message, fmt.Sprintf("names ManifestWorkReplicaSet %s/%s, which places no work on cluster %s", ns, name, c1))
		mw := &workv1.ManifestWork{}
		require.NoError(t, s.admin.Get(s.ctx, client.ObjectKey{Namespace: c1, Name: name}, mw), "cluster1's work is still there")
	})
}
