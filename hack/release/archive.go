package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one file of a release archive: its name inside the archive, the
// file it is read from and its permission bits.
type entry struct {
	name string
	src  string
	mode os.FileMode
}

// writeArchive writes entries to path as a .tar.gz, or a .zip when path ends
// in .zip. The bytes depend only on the entries' names, modes and contents and
// on mtime: entries are sorted by name, owned by uid and gid 0 with no owner
// names, stamped with mtime, and the gzip header carries no name and no time.
func writeArchive(path string, entries []entry, mtime time.Time) error {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	if strings.HasSuffix(path, ".zip") {
		err = writeZip(f, entries, mtime)
	} else {
		err = writeTarGz(f, entries, mtime)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close archive: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// writeTarGz writes entries as a gzip-compressed ustar archive to w.
func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	// A zero Header.ModTime and Name: gzip writes MTIME 0 and no FNAME field.
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return fmt.Errorf("read %s: %w", e.name, err)
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.name,
			Mode:     int64(e.mode.Perm()),
			Size:     int64(len(data)),
			ModTime:  mtime.UTC(),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar header of %s: %w", e.name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("tar %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes entries as a deflated zip archive to w.
func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return fmt.Errorf("read %s: %w", e.name, err)
		}
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime.UTC()}
		hdr.SetMode(e.mode.Perm())
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return fmt.Errorf("zip header of %s: %w", e.name, err)
		}
		if _, err := fw.Write(data); err != nil {
			return fmt.Errorf("zip %s: %w", e.name, err)
		}
	}
	return zw.Close()
}

// sha256File returns the hex sha256 of the file at path.
func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checksum: %w", err)
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checksums renders sums (file name to hex sha256) in the format of
// sha256sum, which `sha256sum -c` reads back: one "<sum>  <name>" line per
// file, sorted by name.
func checksums(sums map[string]string) []byte {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, "%s  %s\n", sums[name], name)
	}
	return []byte(b.String())
}
