package payload

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// countingReader reads chunks from s and counts the reads of each.
type countingReader struct {
	s     store
	reads map[int]int
}

func (c *countingReader) read(ctx context.Context, i int, ref payloadv1alpha1.ChunkRef) ([]byte, error) {
	c.reads[i]++
	return Reader(c.s.get)(ctx, i, ref)
}

func TestIndexReadsOnlyTheChunksItNeeds(t *testing.T) {
	// Small manifests that share chunks, one that spans four chunks, then
	// more small ones.
	ms := append(manifests(40, 20<<10), configMap("big", 3<<20, "big"))
	ms = append(ms, manifests(30, 30<<10)...)
	ref, chunks, err := Split("app", ms)
	require.NoError(t, err)
	s := store{}
	s.put(t, chunks)
	c := &countingReader{s: s, reads: map[int]int{}}
	x, p, err := Scan(context.Background(), &ref.Spec, c.read, func(int, []byte) error { return nil })
	require.NoError(t, err)
	require.True(t, p.Complete())
	require.Equal(t, len(ms), x.Manifests())
	big := 40
	require.Greater(t, x.end[big], x.start[big]+1, "the big manifest spans several chunks")

	tests := []struct {
		name string
		want func(int) bool
	}{
		{"every manifest", func(int) bool { return true }},
		{"none", func(int) bool { return false }},
		{"the one across chunks", func(o int) bool { return o == big }},
		{"the one after it", func(o int) bool { return o == big+1 }},
		{"the first and the last", func(o int) bool { return o == 0 || o == len(ms)-1 }},
		{"every seventh", func(o int) bool { return o%7 == 3 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.reads = map[int]int{}
			var got []int
			err := x.Read(context.Background(), &ref.Spec, c.read, tt.want, func(o int, m []byte) error {
				got = append(got, o)
				assert.JSONEq(t, string(ms[o].Raw), string(m), "manifest %d", o)
				return nil
			})
			require.NoError(t, err)
			var want []int
			needed := map[int]bool{}
			for o := range ms {
				if tt.want(o) {
					want = append(want, o)
					for i := x.start[o]; i <= x.end[o]; i++ {
						needed[int(i)] = true
					}
				}
			}
			assert.Equal(t, want, got)
			for i, n := range c.reads {
				assert.True(t, needed[i], "chunk %d read without holding a wanted manifest", i)
				assert.Equal(t, 1, n, "chunk %d read once", i)
			}
			assert.Len(t, c.reads, len(needed))
		})
	}
}

func TestIndexReadRefusesAChangedPayload(t *testing.T) {
	ref, chunks, err := Split("app", manifests(50, 20<<10))
	require.NoError(t, err)
	s := store{}
	s.put(t, chunks)
	x, _, err := Scan(context.Background(), &ref.Spec, Reader(s.get), func(int, []byte) error { return nil })
	require.NoError(t, err)

	// A chunk gone since the scan.
	delete(s, chunks[3].Name())
	err = x.Read(context.Background(), &ref.Spec, Reader(s.get), func(int) bool { return true }, func(int, []byte) error { return nil })
	require.ErrorContains(t, err, fmt.Sprintf("ManifestChunk %s is gone since the payload was verified", chunks[3].Name()))

	// Another payload's chunk list.
	other, _, err := Split("app", []workv1.Manifest{configMap("x", 10, "x")})
	require.NoError(t, err)
	err = x.Read(context.Background(), &other.Spec, Reader(s.get), func(int) bool { return true }, func(int, []byte) error { return nil })
	require.ErrorContains(t, err, "the index is of a payload of")
}
