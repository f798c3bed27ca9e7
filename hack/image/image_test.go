package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// testConfig is the configuration of an image of both platforms, built at a
// fixed time.
func testConfig(t *testing.T, ver string) buildConfig {
	t.Helper()
	platforms, err := parsePlatforms("linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	return buildConfig{
		ModuleDir: filepath.Join("..", ".."),
		Platforms: platforms,
		LDFlags:   "-s -w -X github.com/kubectl-ocm/kubectl-ocm/pkg/version.Version=" + ver,
		Version:   ver,
		Revision:  "0123456789abcdef",
		Source:    "https://github.com/kubectl-ocm/kubectl-ocm",
		Licenses:  "Apache-2.0",
		Created:   time.Unix(1700000000, 0).UTC(),
	}
}

// fakeImages returns the images of cfg, each holding a stand-in binary.
func fakeImages(t *testing.T, cfg buildConfig) []v1.Image {
	t.Helper()
	var images []v1.Image
	for _, p := range cfg.Platforms {
		img, err := controllerImage(cfg, p, []byte("binary for "+p.String()))
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, img)
	}
	return images
}

// readTar returns the headers of the tar r, with the content of the entry
// named want.
func readTar(t *testing.T, r io.Reader, want string) ([]*tar.Header, []byte) {
	t.Helper()
	var hdrs []*tar.Header
	var content []byte
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hdrs, content
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, hdr)
		if hdr.Name == want {
			if content, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// layerEntries reads every entry of every layer of img, with the content
// of the entry named want.
func layerEntries(t *testing.T, img v1.Image, want string) ([]*tar.Header, []byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var hdrs []*tar.Header
	var content []byte
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		h, c := readTar(t, rc, want)
		_ = rc.Close()
		hdrs = append(hdrs, h...)
		if c != nil {
			content = c
		}
	}
	return hdrs, content
}

// checkImage checks what every ocm-controller image must be: the config of
// platform p, run as a non-root user, and no file writable by all.
func checkImage(t *testing.T, img v1.Image, p v1.Platform, ver string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture {
		t.Errorf("config platform %s/%s, want %s", cf.OS, cf.Architecture, p)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/ocm-controller" {
		t.Errorf("entrypoint %q, want /ocm-controller", got)
	}
	uid, _, _ := strings.Cut(cf.Config.User, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("user %q is not a numeric non-root uid", cf.Config.User)
	}
	if cf.Config.Labels[labelVersion] != ver || cf.Config.Labels[labelLicenses] != "Apache-2.0" || cf.Config.Labels[labelRevision] == "" || cf.Config.Labels[labelSource] == "" {
		t.Errorf("labels %v lack the version, license, revision or source", cf.Config.Labels)
	}
	hdrs, bin := layerEntries(t, img, "ocm-controller")
	for _, h := range hdrs {
		if h.Mode&0o002 != 0 {
			t.Errorf("%s is world-writable (mode %o)", h.Name, h.Mode)
		}
		if h.Name == "ocm-controller" && (h.Mode != 0o755 || h.Uid != 0) {
			t.Errorf("/ocm-controller has mode %o, owner %d; want 0755, root", h.Mode, h.Uid)
		}
	}
	if len(bin) == 0 {
		t.Error("the layer holds no /ocm-controller")
	}
}

// platformImages checks every image of idx (checkImage) and returns their
// platforms, in the index's order.
func platformImages(t *testing.T, idx v1.ImageIndex, ver string) []string {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var archs []string
	for _, d := range m.Manifests {
		if d.Platform == nil {
			t.Fatalf("index entry %s has no platform", d.Digest)
		}
		archs = append(archs, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, *d.Platform, ver)
	}
	return archs
}

// hostImage returns the image of idx for the host's architecture.
func hostImage(idx v1.ImageIndex) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Architecture == runtime.GOARCH {
			return idx.Image(d.Digest)
		}
	}
	return nil, errors.New("the index has no image of the host's architecture " + runtime.GOARCH)
}

// TestLayerReproducible checks that the same binary and time give the same
// layer bytes, entries sorted, whatever order they are listed in.
func TestLayerReproducible(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	files := layerFiles([]byte("binary"))
	a, err := layerTar(files, mtime)
	if err != nil {
		t.Fatal(err)
	}
	reversed := make([]layerFile, len(files))
	for i, f := range files {
		reversed[len(files)-1-i] = f
	}
	b, err := layerTar(reversed, mtime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same files in another order give another layer")
	}
	hdrs, _ := readTar(t, bytes.NewReader(a), "")
	prev := ""
	for _, hdr := range hdrs {
		if hdr.Name < prev || !hdr.ModTime.Equal(mtime) {
			t.Errorf("entry %s (after %s) has mtime %s, want sorted entries with mtime %s", hdr.Name, prev, hdr.ModTime, mtime)
		}
		prev = hdr.Name
	}
	cfg := testConfig(t, "v0.1.0")
	d1, err := controllerIndex(cfg, fakeImages(t, cfg)).Digest()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := controllerIndex(cfg, fakeImages(t, cfg)).Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("the same input gives index digests %s and %s", d1, d2)
	}
}

// TestPush pushes a layout to a registry served in-process and reads the
// image back from it; without a registry push refuses.
func TestPush(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	cfg := testConfig(t, "v0.1.0-2-gabcdef0-dirty")
	idx := controllerIndex(cfg, fakeImages(t, cfg))
	dir := t.TempDir()
	if err := writeLayout(filepath.Join(dir, layoutDir), idx, version.ImageTag(cfg.Version)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	reg := strings.TrimPrefix(srv.URL, "http://") + "/kubectl-ocm"

	var out bytes.Buffer
	if err := run(t.Context(), []string{"push", "--out", dir, "--version", cfg.Version, "--registry", reg}, &out); err != nil {
		t.Fatalf("push: %v", err)
	}
	ref := config.ControllerImage(reg, cfg.Version)
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("read %s back: %v", ref, err)
	}
	want, _ := idx.Digest()
	if d, _ := got.Digest(); d != want || !strings.Contains(out.String(), want.String()) {
		t.Errorf("pushed %s (said %q), want %s", d, out.String(), want)
	}
	if got := strings.Join(platformImages(t, got, cfg.Version), ","); got != "linux/amd64,linux/arm64" {
		t.Errorf("pushed platforms %s, want linux/amd64,linux/arm64", got)
	}

	err = run(t.Context(), []string{"push", "--out", dir, "--version", cfg.Version}, &out)
	if !errors.Is(err, errNoRegistry) {
		t.Errorf("push without a registry: %v, want %v", err, errNoRegistry)
	}
}

// TestBuild builds the image of the host's platform from the real binary,
// reads it back from the OCI layout and runs the binary from the layer. An
// index of several platforms is checked with stand-in binaries in TestPush:
// cross-compiling the whole tree for a second architecture here would
// double the test's cost and test the Go toolchain, not this builder.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ocm-controller")
	}
	const ver = "v9.8.7-image-test"
	cfg := testConfig(t, ver)
	host := "linux/" + runtime.GOARCH
	platforms, err := parsePlatforms(host)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Platforms = platforms
	out := t.TempDir()
	var log bytes.Buffer
	// No deadline of its own: a cold cross-build on a busy machine is slow,
	// and go test's -timeout bounds the whole run.
	if err := build(t.Context(), cfg, out, config.DefaultImageRegistry, runtime.GOARCH, &log); err != nil {
		t.Fatalf("build: %v", err)
	}
	idx, err := readLayout(filepath.Join(out, layoutDir))
	if err != nil {
		t.Fatal(err)
	}
	archs := platformImages(t, idx, ver)
	hostImg, err := hostImage(idx)
	if err != nil {
		t.Fatal(err)
	}
	_, bin := layerEntries(t, hostImg, "ocm-controller")
	path := filepath.Join(t.TempDir(), "ocm-controller")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := exec.CommandContext(t.Context(), path, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(got), "ocm-controller "+ver+" ") {
		t.Errorf("ocm-controller version from the image: %q, %v; want it to print %s", got, err, ver)
	}
	if got := strings.Join(archs, ","); got != host {
		t.Errorf("platforms %s, want %s", got, host)
	}

	archive := filepath.Join(out, tarballName(version.ImageTag(ver), v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	tag, err := name.NewTag(config.ControllerImage(config.DefaultImageRegistry, ver))
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("read the archive %s as %s: %v (build said %q)", archive, tag, err, log.String())
	}
	checkImage(t, img, v1.Platform{OS: "linux", Architecture: runtime.GOARCH}, ver)
}
