package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// manifestExtensions are the file extensions read from directories, as kubectl does.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// Manifest is one object read from a file, with where it came from.
type Manifest struct {
	// Object is the manifest.
	Object *unstructured.Unstructured
	// Source names the file and the document in it, such as
	// "app.yaml (document 2)" or "app.yaml (document 1, List item 3)".
	Source string
	// Size is the length of the manifest's JSON encoding, as stored in the
	// ManifestWork.
	Size int
}

// Describe names the manifest's object: Kind [namespace/]name.
func (m Manifest) Describe() string {
	return describe(m.Object)
}

// describe names obj as Kind [namespace/]name.
func describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if name == "" {
		name = "(no name)"
	}
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetKind() + " " + name
}

// ReadManifests reads the manifests in paths: files of one or more YAML or
// JSON documents (a v1 List is expanded into its items), directories (their
// .yaml, .yml and .json files; with recursive, also those of
// subdirectories), and "-" for stdin.
func ReadManifests(paths []string, recursive bool, stdin io.Reader) ([]Manifest, error) {
	var out []Manifest
	for _, p := range paths {
		if p == "-" {
			ms, err := decodeManifests("stdin", stdin)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
			continue
		}
		files, err := manifestFiles(p, recursive)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			ms, err := readFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

// manifestFiles returns p when it is a file, else the manifest files of
// directory p in lexical order, descending into subdirectories if recursive.
func manifestFiles(p string, recursive bool) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(path))) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read manifests in %s: %w", p, err)
	}
	return files, nil
}

// readFile decodes the manifests of one file.
func readFile(path string) ([]Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	defer f.Close()
	return decodeManifests(path, f)
}

// decodeManifests decodes a stream of YAML or JSON documents named source.
// Empty documents are skipped; a document without apiVersion or kind is an
// error naming source and the document.
func decodeManifests(source string, r io.Reader) ([]Manifest, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []Manifest
	for doc := 1; ; doc++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s (document %d): not valid YAML or JSON: %w", source, doc, err)
		}
		if len(obj) == 0 {
			continue
		}
		where := fmt.Sprintf("%s (document %d)", source, doc)
		u := &unstructured.Unstructured{Object: obj}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			for i := range list.Items {
				m, err := newManifest(fmt.Sprintf("%s (document %d, List item %d)", source, doc, i+1), &list.Items[i])
				if err != nil {
					return nil, err
				}
				out = append(out, m)
			}
			continue
		}
		m, err := newManifest(where, u)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

// newManifest checks that obj has apiVersion and kind and measures it.
func newManifest(source string, obj *unstructured.Unstructured) (Manifest, error) {
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return Manifest{}, fmt.Errorf("%s: the manifest has no apiVersion or kind: every manifest must be a complete Kubernetes object", source)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: encode %s: %w", source, describe(obj), err)
	}
	return Manifest{Object: obj, Source: source, Size: len(data)}, nil
}

// ValidateManifests applies the hub's ManifestWork rules to manifests before
// they are sent: at least one manifest, each with metadata.name and without
// metadata.generateName, no object twice (same workv1.ManifestKey: group,
// kind, namespace and name) and a total size of at most limit bytes
// (work create passes workv1.DefaultManifestsSizeLimit). Every problem found is
// reported, each naming the file and the manifest.
func ValidateManifests(manifests []Manifest, limit int) error {
	if len(manifests) == 0 {
		return errors.New("no manifests found: give -f with files or directories holding Kubernetes objects (use -R for subdirectories)")
	}
	var errs []error
	seen := map[string]Manifest{}
	total := 0
	for _, m := range manifests {
		total += m.Size
		if m.Object.GetName() == "" {
			errs = append(errs, fmt.Errorf("%s: %s has no metadata.name: a ManifestWork manifest must be named", m.Source, m.Describe()))
			continue
		}
		if m.Object.GetGenerateName() != "" {
			errs = append(errs, fmt.Errorf("%s: %s sets metadata.generateName: remove it, a ManifestWork manifest needs a fixed metadata.name", m.Source, m.Describe()))
		}
		key := workv1.ManifestKey(m.Object.GetAPIVersion(), m.Object.GetKind(), m.Object.GetNamespace(), m.Object.GetName())
		if first, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("%s: %s is also defined in %s: keep one of them", m.Source, m.Describe(), first.Source))
			continue
		}
		seen[key] = m
	}
	if total > limit {
		errs = append(errs, sizeError(manifests, total, limit))
	}
	return errors.Join(errs...)
}

// sizeError reports manifests over the size limit, naming the largest.
func sizeError(manifests []Manifest, total, limit int) error {
	sorted := slices.Clone(manifests)
	slices.SortStableFunc(sorted, func(a, b Manifest) int { return b.Size - a.Size })
	var largest bytes.Buffer
	for i, m := range sorted[:min(3, len(sorted))] {
		if i > 0 {
			largest.WriteString(", ")
		}
		fmt.Fprintf(&largest, "%s from %s (%d bytes)", m.Describe(), m.Source, m.Size)
	}
	return fmt.Errorf("the manifests total %d bytes, over the %d-byte (%d KiB) limit of a ManifestWork; the largest are %s: split them across several works",
		total, limit, limit/1024, largest.String())
}
