package hub

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workset"
)

// The payload chunks of a ManifestWorkReplicaSet stay in the set's
// namespace; a cluster's agent reads those of its work through
// managedclusters/<cluster>/chunks/<work>/<chunk> (hubtunnel.ChunkPath).
// RBAC cannot say "a chunk that a set placed on your cluster lists", so the
// server decides from the objects of the set's namespace, which the
// cluster's namespace (where anyone who may edit it can write a work naming
// any set) cannot forge: workset.GrantChunks.
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks;manifestworkreplicasets,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list
// +kubebuilder:rbac:groups=work.kubectl-ocm.io,resources=manifestchunks,verbs=get

// grantTTL is how long what a set grants a cluster's work is reused: an
// agent reads a payload's chunks one after another, and each grant reads
// the set, its decisions and its revisions. A set that stops placing work
// on a cluster stops serving it its chunks within this time.
const grantTTL = 10 * time.Second

// maxGrantedChunks bounds the chunk names the grants kept hold, summed;
// past it, expired grants are dropped, and a new one is not kept.
const maxGrantedChunks = 1 << 18

// chunkReadCost is what one chunk request is counted to hold of the
// tunnel's memory while it runs: a chunk (at most 1 MiB, 1.4 MiB as JSON)
// read, decoded and written again, or a grant read from a set's revisions
// (each holding its payload's chunk list).
const chunkReadCost = 8 << 20

// chunkServer answers the chunk requests of agents.
type chunkServer struct {
	// slots bounds the chunk requests running at once, so that what they
	// hold stays within Limits.BufferBudget.
	slots chan struct{}

	mu      sync.Mutex
	grants  map[string]grantEntry
	granted int
}

type grantEntry struct {
	grant   *workset.ChunkGrant
	expires time.Time
}

func newChunkServer(budget int64) *chunkServer {
	return &chunkServer{slots: make(chan struct{}, max(1, budget/chunkReadCost)), grants: map[string]grantEntry{}}
}

// serveChunk answers cluster's agent the ManifestChunk rest names
// (<work>/<chunk>) from the namespace of the ManifestWorkReplicaSet that
// wrote the work, when the set places work on cluster and lists the chunk.
// A refusal names why, and never whether the chunk exists.
func (s *Server) serveChunk(w http.ResponseWriter, r *http.Request, c *caller, cluster, rest string) {
	if r.Method != http.MethodGet {
		writeStatus(w, http.StatusMethodNotAllowed, "payload chunks are read with GET")
		return
	}
	work, chunk, _ := strings.Cut(rest, "/")
	if msgs := validation.IsDNS1123Subdomain(work); len(msgs) > 0 || !payload.ValidChunkName(chunk) {
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("%s is not a path of a payload chunk: %s",
			r.URL.Path, strings.TrimPrefix(hubtunnel.ChunkPath(cluster, "<work>", "sha256-<64 hex digits>"), hubtunnel.APIPath)))
		return
	}
	if !s.admitAgent(w, r, c, hubtunnel.ChunksSubresource, cluster, "read the payload chunks of its works") {
		return
	}
	release, ok := s.acquireConn(w, cluster, c.user)
	if !ok {
		return
	}
	defer release()
	select {
	case s.chunks.slots <- struct{}{}:
		defer func() { <-s.chunks.slots }()
	case <-r.Context().Done():
		return
	}
	grant, code, msg := s.chunks.grant(r.Context(), s.reader, cluster, work)
	if grant == nil {
		writeStatus(w, code, msg)
		return
	}
	if !grant.Lists(chunk) {
		writeStatus(w, http.StatusForbidden, fmt.Sprintf("ManifestWorkReplicaSet %s/%s lists no chunk %s in its template or the revisions it keeps",
			grant.Namespace, grant.Set, chunk))
		return
	}
	obj := &payloadv1alpha1.ManifestChunk{}
	if err := s.reader.Get(r.Context(), client.ObjectKey{Namespace: grant.Namespace, Name: chunk}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			writeStatus(w, http.StatusNotFound, fmt.Sprintf("ManifestChunk %s is not in the namespace %s of ManifestWorkReplicaSet %s yet: write the payload there again",
				chunk, grant.Namespace, grant.Set))
			return
		}
		writeStatus(w, http.StatusServiceUnavailable, fmt.Sprintf("read ManifestChunk %s/%s: %v", grant.Namespace, chunk, err))
		return
	}
	// The chunk's name and content; its namespace and metadata are the
	// set's.
	writeJSON(w, http.StatusOK, &payloadv1alpha1.ManifestChunk{
		TypeMeta:   metav1.TypeMeta{APIVersion: payloadv1alpha1.GroupVersion.String(), Kind: "ManifestChunk"},
		ObjectMeta: metav1.ObjectMeta{Name: obj.Name},
		Spec:       obj.Spec,
	})
}

// grant returns what the set that wrote cluster's ManifestWork work grants
// it, from a grant of the last grantTTL when there is one; or nil, with the
// status code and message of the refusal.
func (cs *chunkServer) grant(ctx context.Context, reader client.Reader, cluster, work string) (*workset.ChunkGrant, int, string) {
	key := cluster + "/" + work
	now := time.Now()
	cs.mu.Lock()
	e, ok := cs.grants[key]
	cs.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.grant, 0, ""
	}
	mw := &workv1.ManifestWork{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: cluster, Name: work}, mw); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, http.StatusNotFound, fmt.Sprintf("cluster %s has no ManifestWork %s", cluster, work)
		}
		return nil, http.StatusServiceUnavailable, fmt.Sprintf("read ManifestWork %s/%s: %v", cluster, work, err)
	}
	ns, set, ok := workv1alpha1.OwnerOf(mw)
	if !ok {
		return nil, http.StatusForbidden, fmt.Sprintf("ManifestWork %s/%s was not written by a ManifestWorkReplicaSet: its chunks are in namespace %s, where its agent reads them", cluster, work, cluster)
	}
	grant, err := workset.GrantChunks(ctx, reader, ns, set, cluster)
	if err != nil {
		return nil, http.StatusServiceUnavailable, err.Error()
	}
	if grant == nil {
		return nil, http.StatusForbidden, fmt.Sprintf("ManifestWork %s/%s names ManifestWorkReplicaSet %s/%s, which places no work on cluster %s", cluster, work, ns, set, cluster)
	}
	cs.keep(key, grantEntry{grant: grant, expires: now.Add(grantTTL)}, now)
	return grant, 0, ""
}

// keep remembers e under key while the grants hold fewer than
// maxGrantedChunks chunk names.
func (cs *chunkServer) keep(key string, e grantEntry, now time.Time) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if old, ok := cs.grants[key]; ok {
		cs.granted -= old.grant.Len()
		delete(cs.grants, key)
	}
	if cs.granted+e.grant.Len() > maxGrantedChunks {
		for k, old := range cs.grants {
			if !now.Before(old.expires) {
				cs.granted -= old.grant.Len()
				delete(cs.grants, k)
			}
		}
	}
	if cs.granted+e.grant.Len() <= maxGrantedChunks {
		cs.grants[key] = e
		cs.granted += e.grant.Len()
	}
}
