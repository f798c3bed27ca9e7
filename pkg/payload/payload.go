package payload

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Chunk sizes, in uncompressed bytes.
const (
	// TargetChunkSize is the average size Split aims for: a manifest of
	// length L ends a chunk with probability L/TargetChunkSize.
	TargetChunkSize = 64 << 10
	// MinChunkSize is the smallest chunk Split ends after a manifest (the
	// last chunk of a payload may be smaller).
	MinChunkSize = 8 << 10
)

// Chunk is one chunk of a payload, uncompressed.
type Chunk struct {
	// Ref is the chunk's digest and size, as the ManifestPayload lists it.
	Ref payloadv1alpha1.ChunkRef
	// Data is the chunk's uncompressed content.
	Data []byte
}

// Name is the name of the chunk's ManifestChunk.
func (c Chunk) Name() string { return ChunkName(c.Ref.Digest) }

// ChunkName is the name of the ManifestChunk of digest ("sha256:<hex>").
func ChunkName(digest string) string {
	return payloadv1alpha1.ChunkNamePrefix + strings.TrimPrefix(digest, payloadv1alpha1.DigestPrefix)
}

// Digest is the digest of data as a ManifestPayload lists it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return payloadv1alpha1.DigestPrefix + hex.EncodeToString(sum[:])
}

// Splitter cuts a stream of manifests into chunks, handing each to a
// function as soon as it is complete, so that a caller holds at most one
// chunk and one manifest at a time.
type Splitter struct {
	emit      func(Chunk) error
	cur       []byte
	spec      payloadv1alpha1.ManifestPayloadSpec
	chunkSize int
}

// NewSplitter returns a Splitter that passes every chunk to emit.
func NewSplitter(emit func(Chunk) error) *Splitter {
	return &Splitter{emit: emit, chunkSize: payloadv1alpha1.MaxChunkSize}
}

// Add appends one manifest, given as JSON, to the payload.
func (s *Splitter) Add(manifest []byte) error {
	var line bytes.Buffer
	if err := json.Compact(&line, manifest); err != nil {
		return fmt.Errorf("manifest %d is not JSON: %w", s.spec.Manifests, err)
	}
	if bytes.IndexByte(line.Bytes(), '\n') >= 0 {
		return fmt.Errorf("manifest %d holds a raw newline after compaction", s.spec.Manifests)
	}
	line.WriteByte('\n')
	s.spec.Manifests++
	s.cur = append(s.cur, line.Bytes()...)
	for len(s.cur) >= s.chunkSize {
		if err := s.cut(s.chunkSize); err != nil {
			return err
		}
	}
	if len(s.cur) >= MinChunkSize && endsChunk(line.Bytes()) {
		return s.cut(len(s.cur))
	}
	return nil
}

// Close emits the last chunk and returns the payload's spec.
func (s *Splitter) Close() (payloadv1alpha1.ManifestPayloadSpec, error) {
	if len(s.cur) > 0 {
		if err := s.cut(len(s.cur)); err != nil {
			return s.spec, err
		}
	}
	if s.spec.Manifests == 0 {
		return s.spec, errors.New("a payload needs at least one manifest")
	}
	return s.spec, nil
}

// cut emits the first n bytes of the current chunk as a chunk.
func (s *Splitter) cut(n int) error {
	data := bytes.Clone(s.cur[:n])
	s.cur = append(s.cur[:0], s.cur[n:]...)
	c := Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: Digest(data), Size: int64(n)}, Data: data}
	s.spec.Chunks = append(s.spec.Chunks, c.Ref)
	s.spec.Size += int64(n)
	if len(s.spec.Chunks) > payloadv1alpha1.MaxChunks || s.spec.Size > payloadv1alpha1.MaxPayloadSize {
		return fmt.Errorf("the payload is over %d MiB (%d chunks at most): split the manifests across several ManifestWorks",
			payloadv1alpha1.MaxPayloadSize>>20, payloadv1alpha1.MaxChunks)
	}
	return s.emit(c)
}

// endsChunk says whether a chunk ends after the manifest line: with
// probability len(line)/TargetChunkSize, decided by the line's own hash so
// that the same manifest always decides the same way.
func endsChunk(line []byte) bool {
	if len(line) >= TargetChunkSize {
		return true
	}
	h := fnv.New64a()
	_, _ = h.Write(line)
	return h.Sum64() < uint64(len(line))*(math.MaxUint64/TargetChunkSize)
}

// Split cuts manifests into chunks and returns the ManifestPayload that
// lists them, named name, and the chunks.
func Split(name string, manifests []workv1.Manifest) (*payloadv1alpha1.ManifestPayload, []Chunk, error) {
	var chunks []Chunk
	s := NewSplitter(func(c Chunk) error { chunks = append(chunks, c); return nil })
	for i := range manifests {
		raw, err := manifestJSON(manifests[i])
		if err != nil {
			return nil, nil, fmt.Errorf("manifest %d: %w", i, err)
		}
		if err := s.Add(raw); err != nil {
			return nil, nil, err
		}
	}
	spec, err := s.Close()
	if err != nil {
		return nil, nil, err
	}
	return Reference(name, spec), chunks, nil
}

// Reference is the ManifestPayload named name that lists spec's chunks.
func Reference(name string, spec payloadv1alpha1.ManifestPayloadSpec) *payloadv1alpha1.ManifestPayload {
	return &payloadv1alpha1.ManifestPayload{
		TypeMeta: metav1.TypeMeta{APIVersion: payloadv1alpha1.GroupVersion.String(), Kind: payloadv1alpha1.KindManifestPayload},
		Metadata: metav1.ObjectMeta{Name: name},
		Spec:     spec,
	}
}

// Manifest is p as the one manifest of a ManifestWork.
func Manifest(p *payloadv1alpha1.ManifestPayload) (workv1.Manifest, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return workv1.Manifest{}, fmt.Errorf("encode ManifestPayload: %w", err)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}, nil
}

// manifestJSON returns a manifest's JSON.
func manifestJSON(m workv1.Manifest) ([]byte, error) {
	if len(m.Raw) > 0 {
		return m.Raw, nil
	}
	if m.Object != nil {
		return json.Marshal(m.Object)
	}
	return nil, errors.New("manifest is empty")
}

// Object returns the ManifestChunk of c in namespace, compressed with gzip
// when that makes it smaller.
func Object(namespace string, c Chunk) (*payloadv1alpha1.ManifestChunk, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(c.Data); err != nil {
		return nil, fmt.Errorf("compress chunk %s: %w", c.Ref.Digest, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress chunk %s: %w", c.Ref.Digest, err)
	}
	spec := payloadv1alpha1.ManifestChunkSpec{Encoding: payloadv1alpha1.EncodingGzip, Size: c.Ref.Size, Data: buf.Bytes()}
	if buf.Len() >= len(c.Data) {
		spec.Encoding, spec.Data = payloadv1alpha1.EncodingIdentity, c.Data
	}
	return &payloadv1alpha1.ManifestChunk{
		TypeMeta:   metav1.TypeMeta{APIVersion: payloadv1alpha1.GroupVersion.String(), Kind: "ManifestChunk"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name(), Namespace: namespace},
		Spec:       spec,
	}, nil
}

// DigestError is a chunk whose content is not what its digest says: changed
// or damaged after it was written.
type DigestError struct {
	// Chunk is the ManifestChunk's name.
	Chunk string
	// Reason says what differs.
	Reason string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("ManifestChunk %s is not the chunk its name and the ManifestPayload promise (%s): "+
		"delete it and write it again from the payload (kubectl ocm work create writes missing chunks)", e.Chunk, e.Reason)
}

// MissingChunkError is a chunk a payload lists that is not in the
// namespace it is read from.
type MissingChunkError struct {
	// Namespace is where the chunk was looked for, Chunk its name.
	Namespace, Chunk string
}

func (e *MissingChunkError) Error() string {
	return fmt.Sprintf("ManifestChunk %s, which the payload lists, is not in namespace %s: "+
		"write every chunk of the payload before the work or template that lists it", e.Chunk, e.Namespace)
}

// Decode returns the uncompressed content of obj after checking it against
// want: its name, size and SHA-256. It reads at most want.Size+1 bytes of
// the decompressed stream, so a chunk cannot make it use more memory than
// the payload promised.
func Decode(obj *payloadv1alpha1.ManifestChunk, want payloadv1alpha1.ChunkRef) ([]byte, error) {
	name := ChunkName(want.Digest)
	if obj.Name != name {
		return nil, &DigestError{Chunk: obj.Name, Reason: "its name is not " + name}
	}
	var r io.Reader = bytes.NewReader(obj.Spec.Data)
	switch obj.Spec.Encoding {
	case payloadv1alpha1.EncodingGzip, "":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, &DigestError{Chunk: name, Reason: "its gzip data is damaged: " + err.Error()}
		}
		defer zr.Close()
		r = zr
	case payloadv1alpha1.EncodingIdentity:
	default:
		return nil, &DigestError{Chunk: name, Reason: fmt.Sprintf("unknown encoding %q", obj.Spec.Encoding)}
	}
	data, err := io.ReadAll(io.LimitReader(r, want.Size+1))
	if err != nil {
		return nil, &DigestError{Chunk: name, Reason: "its data cannot be read: " + err.Error()}
	}
	if int64(len(data)) != want.Size {
		return nil, &DigestError{Chunk: name, Reason: fmt.Sprintf("it holds %s bytes, the payload lists %d", sizeOf(len(data), want.Size), want.Size)}
	}
	if got := Digest(data); got != want.Digest {
		return nil, &DigestError{Chunk: name, Reason: "its content's digest is " + got}
	}
	return data, nil
}

// sizeOf prints n, or "more than" limit when the read stopped at limit+1.
func sizeOf(n int, limit int64) string {
	if int64(n) > limit {
		return fmt.Sprintf("more than %d", limit)
	}
	return fmt.Sprint(n)
}
