package agent

import (
	"context"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// manifestSource hands the manifests of a work to the apply one at a time,
// in apply order (apply.SortManifests: stable by rank). The apply keeps
// none of them after it has used it, so that the manifests of a large
// payload are never all in memory at once.
type manifestSource interface {
	// Len is the number of manifests.
	Len() int
	// Each calls fn with every manifest, in apply order. It stops at the
	// first error reading the manifests, which it returns.
	Each(ctx context.Context, fn func(m *apply.Manifest)) error
}

// specManifests is the manifests of a work's spec, decoded: a small work's.
type specManifests []*apply.Manifest

// manifestsOf returns the manifests of spec.
func manifestsOf(spec *workv1.ManifestWorkSpec) specManifests {
	return apply.ParseManifests(spec)
}

// Len is the number of manifests.
func (s specManifests) Len() int { return len(s) }

// Each calls fn with every manifest in apply order.
func (s specManifests) Each(_ context.Context, fn func(m *apply.Manifest)) error {
	for _, m := range apply.SortManifests(s) {
		fn(m)
	}
	return nil
}

// payloadManifests is the manifests of a large payload staged whole: each
// rank present is one pass over the chunks that hold manifests of that
// rank, which are read (from disk or the hub) and checked again, and each
// manifest is decoded when its turn comes. Memory holds one chunk and one
// manifest at a time, whatever the payload's size.
type payloadManifests struct {
	spec   *payloadv1alpha1.ManifestPayloadSpec
	staged *stagedPayload
	read   payload.ChunkReader
	// failed is told when reading the payload failed.
	failed func()
}

// Len is the number of manifests.
func (s *payloadManifests) Len() int { return len(s.staged.ranks) }

// Each calls fn with every manifest in apply order.
func (s *payloadManifests) Each(ctx context.Context, fn func(m *apply.Manifest)) error {
	for _, rank := range s.staged.order {
		err := s.staged.index.Read(ctx, s.spec, s.read,
			func(ordinal int) bool { return s.staged.ranks[ordinal] == rank },
			func(ordinal int, raw []byte) error {
				fn(apply.ParseManifest(int32(ordinal), raw))
				return nil
			})
		if err != nil {
			if s.failed != nil {
				s.failed()
			}
			return err
		}
	}
	return nil
}
