package hubtunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
)

// MaxChunkAnswer bounds what ChunkClient reads of an answer: a chunk is at
// most 1 MiB, a third more in base64, with its JSON around it.
const MaxChunkAnswer = 2 << 20

// ChunkClient reads the payload chunks of ManifestWorkReplicaSets, which
// stay in the sets' namespaces, through the hub tunnel's server at
// ChunkPath, as a cluster's agent: Client carries the agent's hub
// credential.
type ChunkClient struct {
	// Host is the hub API server's URL.
	Host string
	// Client sends the requests with the agent's credential.
	Client *http.Client
}

// Get reads chunk of cluster's ManifestWork work. A refusal is returned as
// the API error the hub answered (404 a chunk missing from the set's
// namespace, 403 a chunk the hub does not let this agent read, 429 too many
// requests at once), its message the hub's. The chunk is returned as the
// hub sent it: check it against its digest (payload.Decode).
func (c *ChunkClient) Get(ctx context.Context, cluster, work, chunk string) (*payloadv1alpha1.ManifestChunk, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.Host, "/")+ChunkPath(cluster, work, chunk), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read ManifestChunk %s through the hub tunnel: %w", chunk, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxChunkAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("read ManifestChunk %s through the hub tunnel: %w", chunk, err)
	}
	if len(body) > MaxChunkAnswer {
		return nil, fmt.Errorf("read ManifestChunk %s through the hub tunnel: the answer is over %d bytes", chunk, MaxChunkAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		status := &metav1.Status{}
		if json.Unmarshal(body, status) == nil && status.Kind == "Status" {
			if status.Code == 0 {
				status.Code = int32(resp.StatusCode)
			}
			return nil, &apierrors.StatusError{ErrStatus: *status}
		}
		return nil, apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodGet, payloadv1alpha1.GroupVersion.WithResource("manifestchunks").GroupResource(), chunk, string(body), 0, false)
	}
	obj := &payloadv1alpha1.ManifestChunk{}
	if err := json.Unmarshal(body, obj); err != nil {
		return nil, fmt.Errorf("decode ManifestChunk %s from the hub tunnel: %w", chunk, err)
	}
	return obj, nil
}
