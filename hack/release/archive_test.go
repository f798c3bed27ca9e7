package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fixtureEntries writes three files and returns them as archive entries, in
// an order other than the archive's.
func fixtureEntries(t *testing.T) []entry {
	t.Helper()
	dir := t.TempDir()
	files := []entry{
		{name: "kubectl_complete-ocm", mode: 0o755},
		{name: "LICENSE", mode: 0o644},
		{name: "kubectl-ocm", mode: 0o755},
	}
	for i := range files {
		files[i].src = filepath.Join(dir, files[i].name)
		if err := os.WriteFile(files[i].src, []byte("content of "+files[i].name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestArchivesReproducible writes each kind of archive twice, from files
// with other times, modes and owners on disk, and expects the same bytes,
// entries sorted by name with the given modes, owner 0, the fixed time, and
// a gzip header with no name and no time.
func TestArchivesReproducible(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	for _, name := range []string{"a.tar.gz", "a.zip"} {
		t.Run(name, func(t *testing.T) {
			var outs [][]byte
			for range 2 {
				entries := fixtureEntries(t)
				// Files touched at other times must not change the archive.
				for _, e := range entries {
					if err := os.Chtimes(e.src, time.Now(), time.Now()); err != nil {
						t.Fatal(err)
					}
				}
				path := filepath.Join(t.TempDir(), name)
				if err := writeArchive(path, entries, mtime); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, b)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatal("two runs on the same inputs wrote different archives")
			}
			got := readArchive(t, name, outs[0])
			want := []archived{
				{"LICENSE", 0o644, "content of LICENSE"},
				{"kubectl-ocm", 0o755, "content of kubectl-ocm"},
				{"kubectl_complete-ocm", 0o755, "content of kubectl_complete-ocm"},
			}
			if len(got) != len(want) {
				t.Fatalf("entries %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("entry %d = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// archived is one entry read back from an archive.
type archived struct {
	name    string
	mode    os.FileMode
	content string
}

// readArchive reads an archive back, checking each entry's owner and time.
func readArchive(t *testing.T, name string, b []byte) []archived {
	t.Helper()
	mtime := time.Unix(1700000000, 0)
	var out []archived
	if filepath.Ext(name) == ".zip" {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if !f.Modified.Equal(mtime) {
				t.Errorf("%s modified %s, want %s", f.Name, f.Modified, mtime)
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			c, _ := io.ReadAll(rc)
			_ = rc.Close()
			out = append(out, archived{f.Name, f.Mode().Perm(), string(c)})
		}
		return out
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header has name %q and time %s, want neither", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: owner %d:%d (%q:%q), time %s; want 0:0, no names, %s", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, mtime)
		}
		c, _ := io.ReadAll(tr)
		out = append(out, archived{h.Name, os.FileMode(h.Mode).Perm(), string(c)})
	}
	return out
}

// TestChecksums writes sha256sum's format, sorted by name.
func TestChecksums(t *testing.T) {
	got := string(checksums(map[string]string{"b.zip": "22", "a.tar.gz": "11"}))
	if want := "11  a.tar.gz\n22  b.zip\n"; got != want {
		t.Errorf("checksums = %q, want %q", got, want)
	}
}

// TestParsePlatforms accepts release platforms only.
func TestParsePlatforms(t *testing.T) {
	if ps, err := parsePlatforms(""); err != nil || len(ps) != len(platforms) {
		t.Errorf("parsePlatforms(\"\") = %v, %v; want every platform", ps, err)
	}
	if ps, err := parsePlatforms("windows/amd64,linux/arm64"); err != nil || len(ps) != 2 || ps[0].archive("v1.0.0") != "kubectl-ocm_v1.0.0_windows_amd64.zip" {
		t.Errorf("parsePlatforms = %v, %v", ps, err)
	}
	if _, err := parsePlatforms("linux/s390x"); err == nil {
		t.Error("linux/s390x accepted")
	}
}
