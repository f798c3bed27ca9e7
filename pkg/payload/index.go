package payload

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
)

// ChunkReader returns the content of chunk i of a payload, whose digest and
// size ref gives, uncompressed and checked against ref (a *DigestError when
// it is not what ref promises); a missing chunk is a NotFound error. A
// reader that keeps chunks (on disk, say) is where they are looked up
// before the hub.
type ChunkReader func(ctx context.Context, i int, ref payloadv1alpha1.ChunkRef) ([]byte, error)

// Reader is the ChunkReader that reads each chunk with get and checks it
// with Decode.
func Reader(get Getter) ChunkReader {
	return func(ctx context.Context, _ int, ref payloadv1alpha1.ChunkRef) ([]byte, error) {
		obj, err := get(ctx, ChunkName(ref.Digest))
		if err != nil {
			return nil, err
		}
		return Decode(obj, ref)
	}
}

// Index says where the manifests of a payload lie among its chunks, as Scan
// found them, so that a later pass reads only the chunks that hold the
// manifests it wants, one chunk at a time. It holds a few bytes per chunk
// and per manifest, never their content.
type Index struct {
	// first[c] is the ordinal of the manifest that chunk c's first byte
	// belongs to, and inside[c] says that manifest began in an earlier
	// chunk.
	first  []int32
	inside []bool
	// start[o] and end[o] are the chunks where manifest o begins and ends.
	start, end []int32
}

// Manifests is the number of manifests of the payload.
func (x *Index) Manifests() int { return len(x.end) }

// Scan reads every chunk of spec with read, in order, and passes each
// manifest of the payload to fn as its JSON with its ordinal, holding one
// chunk and one manifest at a time (fn must not keep the slice). After a
// missing chunk it goes on reading the others, to count them, without
// calling fn again. It returns the payload's Index when every chunk was
// present, the progress, and the first error of read other than NotFound
// (a *DigestError as it is, others wrapped) or of fn.
func Scan(ctx context.Context, spec *payloadv1alpha1.ManifestPayloadSpec, read ChunkReader, fn func(ordinal int, manifest []byte) error) (*Index, Progress, error) {
	p := Progress{Chunks: int64(len(spec.Chunks)), Bytes: spec.Size}
	x := &Index{first: make([]int32, 0, len(spec.Chunks)), inside: make([]bool, 0, len(spec.Chunks))}
	var line []byte
	complete, started := true, false
	var begin int32
	for i, ref := range spec.Chunks {
		data, err := readChunk(ctx, read, i, ref)
		if apierrors.IsNotFound(err) {
			complete = false
			if len(p.Missing) < 5 {
				p.Missing = append(p.Missing, ChunkName(ref.Digest))
			}
			continue
		}
		if err != nil {
			return nil, p, err
		}
		p.PresentChunks++
		p.PresentBytes += ref.Size
		if !complete {
			continue
		}
		x.first = append(x.first, int32(len(x.end)))
		x.inside = append(x.inside, started)
		for len(data) > 0 {
			if !started {
				started, begin = true, int32(i)
			}
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				line = append(line, data...)
				break
			}
			line = append(line, data[:j]...)
			data = data[j+1:]
			x.start, x.end = append(x.start, begin), append(x.end, int32(i))
			if err := fn(len(x.end)-1, line); err != nil {
				return nil, p, err
			}
			line, started = line[:0], false
		}
	}
	if !complete {
		return nil, p, nil
	}
	if started {
		return nil, p, errors.New("the payload's last manifest does not end with a newline: its chunks were not written by a payload writer")
	}
	return x, p, nil
}

// Read passes fn, in order, the manifests of the payload x indexes for
// which want(ordinal) is true, reading with read only the chunks that hold
// them, one at a time (fn must not keep the slice). Every chunk it reads
// must be there: Scan found them all, so a missing one is an error now.
func (x *Index) Read(ctx context.Context, spec *payloadv1alpha1.ManifestPayloadSpec, read ChunkReader, want func(ordinal int) bool, fn func(ordinal int, manifest []byte) error) error {
	if len(x.first) != len(spec.Chunks) {
		return fmt.Errorf("the index is of a payload of %d chunks, not of %d", len(x.first), len(spec.Chunks))
	}
	need := make([]bool, len(spec.Chunks))
	for o := range x.end {
		if want(o) {
			for c := x.start[o]; c <= x.end[o]; c++ {
				need[c] = true
			}
		}
	}
	var line []byte
	ordinal, skip, next := 0, false, 0
	for c, ref := range spec.Chunks {
		if !need[c] {
			continue
		}
		if c != next {
			// The chunks between were not read: start again where chunk
			// c begins, past the end of a manifest begun before it.
			line, ordinal, skip = line[:0], int(x.first[c]), x.inside[c]
		}
		next = c + 1
		data, err := readChunk(ctx, read, c, ref)
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestChunk %s is gone since the payload was verified: %w", ChunkName(ref.Digest), err)
		}
		if err != nil {
			return err
		}
		for len(data) > 0 {
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				if !skip {
					line = append(line, data...)
				}
				break
			}
			if skip {
				data, skip = data[j+1:], false
				ordinal++
				continue
			}
			line = append(line, data[:j]...)
			data = data[j+1:]
			if want(ordinal) {
				if err := fn(ordinal, line); err != nil {
					return err
				}
			}
			line = line[:0]
			ordinal++
		}
	}
	return nil
}

// readChunk reads chunk i with read, naming the chunk in errors other than
// NotFound and a *DigestError, which are returned as they are.
func readChunk(ctx context.Context, read ChunkReader, i int, ref payloadv1alpha1.ChunkRef) ([]byte, error) {
	data, err := read(ctx, i, ref)
	var digestErr *DigestError
	if err != nil && !apierrors.IsNotFound(err) && !errors.As(err, &digestErr) {
		return nil, fmt.Errorf("read ManifestChunk %s: %w", ChunkName(ref.Digest), err)
	}
	return data, err
}
