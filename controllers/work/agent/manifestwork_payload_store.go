package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// DefaultPayloadCacheSize bounds the bytes of chunks the work agent keeps
// on disk. The agent's Deployment gives the directory an emptyDir of
// 600 MiB (config/agent/40-deployment.yaml), so that the chunks being
// written never take it past its limit.
const DefaultPayloadCacheSize = 512 << 20

// storeTempPrefix begins the names of chunk files being written; a file of
// that name found when the store opens was cut short and is removed.
const storeTempPrefix = ".tmp-"

// chunkStore keeps verified chunks of large payloads on disk, as the hub
// stores them (compressed), one file per chunk named by the chunk's name
// and encoding. The disk is trusted no more than the hub: read checks every
// chunk against its digest again and removes one that fails. It holds at
// most limit bytes: when a chunk does not fit, the chunks no work lists are
// removed first, and a chunk that still does not fit is not kept (the
// agent reads it from the hub when it needs it again). A nil store keeps
// nothing.
type chunkStore struct {
	dir   string
	limit int64
	// temporary says dir was made for this process and is removed by close.
	temporary bool

	mu sync.Mutex
	// files are the chunks on disk by name, size the bytes they hold and
	// the bytes reserved for those being written.
	files map[string]storedChunk
	size  int64
	// writing are the chunks being written.
	writing map[string]bool
	// lists are the chunk names each work lists: its generation being
	// staged and the one it last staged whole.
	lists map[string][]string
}

// storedChunk is one chunk file.
type storedChunk struct {
	encoding payloadv1alpha1.Encoding
	size     int64
}

// openChunkStore opens the store in dir, made if missing, and takes stock
// of the chunks already there (those a restarted agent kept). An empty dir
// makes a new directory under $TMPDIR, removed by close.
func openChunkStore(dir string, limit int64) (*chunkStore, error) {
	s := &chunkStore{dir: dir, limit: limit, files: map[string]storedChunk{}, writing: map[string]bool{}, lists: map[string][]string{}}
	if dir == "" {
		d, err := os.MkdirTemp("", "ocm-payload-cache-")
		if err != nil {
			return nil, fmt.Errorf("make a directory for the payload cache: %w", err)
		}
		s.dir, s.temporary = d, true
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("payload cache directory: %w", err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("payload cache directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, storeTempPrefix) {
			_ = os.Remove(filepath.Join(s.dir, name))
			continue
		}
		chunk, encoding, ok := parseChunkFile(name)
		info, err := e.Info()
		if !ok || err != nil || !info.Mode().IsRegular() {
			continue
		}
		if _, dup := s.files[chunk]; dup {
			_ = os.Remove(filepath.Join(s.dir, name))
			continue
		}
		s.files[chunk] = storedChunk{encoding: encoding, size: info.Size()}
		s.size += info.Size()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(0)
	return s, nil
}

// parseChunkFile reads a chunk file's name: <chunk name>.<encoding>.
func parseChunkFile(file string) (chunk string, encoding payloadv1alpha1.Encoding, ok bool) {
	chunk, enc, ok := strings.Cut(file, ".")
	if !ok || !strings.HasPrefix(chunk, payloadv1alpha1.ChunkNamePrefix) {
		return "", "", false
	}
	switch encoding = payloadv1alpha1.Encoding(enc); encoding {
	case payloadv1alpha1.EncodingGzip, payloadv1alpha1.EncodingIdentity:
		return chunk, encoding, true
	}
	return "", "", false
}

// path is the file of chunk with encoding.
func (s *chunkStore) path(chunk string, encoding payloadv1alpha1.Encoding) string {
	return filepath.Join(s.dir, chunk+"."+string(encoding))
}

// read returns the content of the chunk ref names, uncompressed and checked
// against ref, or nil when the store does not have it. err says why a
// chunk it had was removed: unreadable, or not what ref promises.
func (s *chunkStore) read(ref payloadv1alpha1.ChunkRef) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	name := payload.ChunkName(ref.Digest)
	s.mu.Lock()
	f, ok := s.files[name]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	raw, err := os.ReadFile(s.path(name, f.encoding))
	if errors.Is(err, fs.ErrNotExist) {
		// Evicted since it was looked up.
		s.remove(name)
		return nil, nil
	}
	if err == nil {
		var data []byte
		obj := &payloadv1alpha1.ManifestChunk{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: payloadv1alpha1.ManifestChunkSpec{Encoding: f.encoding, Size: ref.Size, Data: raw}}
		if data, err = payload.Decode(obj, ref); err == nil {
			return data, nil
		}
	}
	s.remove(name)
	return nil, fmt.Errorf("chunk %s kept on disk removed: %w", name, err)
}

// put keeps obj, a chunk read from the hub and verified, when there is
// room for it.
func (s *chunkStore) put(obj *payloadv1alpha1.ManifestChunk) error {
	if s == nil {
		return nil
	}
	name, encoding := obj.Name, obj.Spec.Encoding
	if encoding == "" {
		encoding = payloadv1alpha1.EncodingGzip
	}
	if _, _, ok := parseChunkFile(name + "." + string(encoding)); !ok {
		return fmt.Errorf("chunk %s: no file name for encoding %q", name, encoding)
	}
	n := int64(len(obj.Spec.Data))
	s.mu.Lock()
	_, have := s.files[name]
	if have || s.writing[name] || !s.reserve(n) {
		s.mu.Unlock()
		return nil
	}
	s.writing[name] = true
	s.mu.Unlock()

	err := s.write(name, encoding, obj.Spec.Data)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writing, name)
	if err != nil {
		s.size -= n
		return err
	}
	s.files[name] = storedChunk{encoding: encoding, size: n}
	return nil
}

// write writes a chunk file whole or not at all.
func (s *chunkStore) write(name string, encoding payloadv1alpha1.Encoding, data []byte) error {
	f, err := os.CreateTemp(s.dir, storeTempPrefix+name+"-")
	if err != nil {
		return fmt.Errorf("keep chunk %s: %w", name, err)
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), s.path(name, encoding))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("keep chunk %s: %w", name, err)
	}
	return nil
}

// reserve counts n more bytes if they fit under the limit, after removing
// chunks no work lists if needed; s.mu is held.
func (s *chunkStore) reserve(n int64) bool {
	if n > s.limit {
		return false
	}
	if s.size+n > s.limit {
		s.evict(n)
	}
	if s.size+n > s.limit {
		return false
	}
	s.size += n
	return true
}

// evict removes chunks no work lists until n more bytes fit, or none is
// left to remove; s.mu is held.
func (s *chunkStore) evict(n int64) {
	if s.size+n <= s.limit {
		return
	}
	listed := map[string]bool{}
	for _, names := range s.lists {
		for _, name := range names {
			listed[name] = true
		}
	}
	for name, f := range s.files {
		if s.size+n <= s.limit {
			return
		}
		if !listed[name] {
			_ = os.Remove(s.path(name, f.encoding))
			delete(s.files, name)
			s.size -= f.size
		}
	}
}

// remove removes one chunk.
func (s *chunkStore) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[name]; ok {
		_ = os.Remove(s.path(name, f.encoding))
		delete(s.files, name)
		s.size -= f.size
	}
}

// list records the chunks work lists (those of the generation being staged
// and of the last one staged whole), which eviction keeps.
func (s *chunkStore) list(work string, names []string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists[work] = names
}

// forget drops what work lists, and removes its chunks that no other work
// lists: the work is gone.
func (s *chunkStore) forget(work string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names, ok := s.lists[work]
	if !ok {
		return
	}
	delete(s.lists, work)
	still := map[string]bool{}
	for _, other := range s.lists {
		for _, name := range other {
			still[name] = true
		}
	}
	for _, name := range names {
		if f, ok := s.files[name]; ok && !still[name] {
			_ = os.Remove(s.path(name, f.encoding))
			delete(s.files, name)
			s.size -= f.size
		}
	}
}

// close removes the directory when the store made it.
func (s *chunkStore) close() error {
	if s == nil || !s.temporary {
		return nil
	}
	return os.RemoveAll(s.dir)
}
