package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// kubectlBin is bin/kube/kubectl, or kubectl in $KUBE_BIN_DIR.
func kubectlBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBE_BIN_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "bin", "kube")
	}
	kubectl := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl not found: %v; run 'make kube-bins'", err)
	}
	return kubectl
}

// TestCheckedInManifest checks krew-index/plugins/ocm.yaml is what
// `make release` writes. The manifest is a function of its version, the
// commit its archives were built from (recorded in its header) and the
// archives' sha256 sums. It checks that:
//
//   - regenerating the manifest from the checked-in version, commit
//     and sums gives the whole file byte for byte (any hand edit, or a change
//     to the generator's text, URIs, layout or platforms not released again,
//     fails), it lists every release platform, and validate-krew-manifest
//     accepts it (without -short);
//   - the Helm charts are at the manifest's version (make release sets it).
//
// The sums themselves are those `make release` computed and checked on the
// recorded commit; that what is built now is reproducible is TestRelease's
// check.
func TestCheckedInManifest(t *testing.T) {
	root := repoRoot(t)
	path := filepath.Join(root, "krew-index", "plugins", "ocm.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run make release VERSION=<version>", err)
	}
	m, err := parseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkVersion(m.Spec.Version); err != nil {
		t.Error(err)
	}
	if !slices.Equal(m.Platforms, platforms) {
		t.Errorf("the manifest lists %v, not the release platforms %v: run make release", m.Platforms, platforms)
	}
	want, err := renderManifest(m.Spec.Version, m.Commit, m.Platforms, m.Sums)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("krew-index/plugins/ocm.yaml differs from what make release writes for %s: run make release VERSION=<version>\n%s",
			m.Spec.Version, diffLines(string(want), string(b)))
	}
	if err := checkChartVersions(root, m.Spec.Version); err != nil {
		t.Error(err)
	}
	if testing.Short() {
		return
	}
	if err := validateManifest(root, path, true, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRelease packages the plugin for linux/amd64 (this platform) with a
// test version, twice, the second time from a copy of the sources at
// another path, and expects the same archive and checksums.txt; then
// checks the release as make release does (checkRelease: validate-krew-manifest
// on the manifest and installing its archive, the real krew installing it
// with --manifest and --archive, `kubectl ocm version` and completion through
// kubectl, and krew uninstall leaving nothing); then the other install
// methods that run offline: the release archive unpacked onto PATH after
// `sha256sum -c checksums.txt`, and `go install` into a new GOBIN.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin and krew; skipped with -short")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("runs the linux/amd64 archive")
	}
	root, kubectl := repoRoot(t), kubectlBin(t)
	const v = "v0.0.0-test.1"
	s, err := releaseStamp(root, v, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ps := []platform{{"linux", "amd64"}}
	var dists []string
	for _, src := range []string{root, copySources(t, root)} {
		dist := t.TempDir()
		if _, err := packageAll(src, dist, ps, s); err != nil {
			t.Fatal(err)
		}
		dists = append(dists, dist)
	}
	for _, name := range []string{ps[0].archive(v), checksumsFile} {
		a, errA := os.ReadFile(filepath.Join(dists[0], name))
		b, errB := os.ReadFile(filepath.Join(dists[1], name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("two release runs of one source, in two directories, wrote different %s (%v, %v)", name, errA, errB)
		}
	}
	dist := dists[0]
	sum, err := sha256File(filepath.Join(dist, ps[0].archive(v)))
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(t.TempDir(), "ocm.yaml")
	b, err := renderManifest(v, s.Commit, ps, map[string]string{ps[0].archive(v): sum})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(manifest, b); err != nil {
		t.Fatal(err)
	}

	t.Run("krew", func(t *testing.T) {
		err := checkRelease(root, checkInput{manifest: manifest, dist: dist, version: v, platforms: ps, kubectl: kubectl, logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("archive", func(t *testing.T) {
		check := exec.Command("sha256sum", "-c", checksumsFile)
		check.Dir = dist
		if out, err := check.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c: %v\n%s", err, out)
		}
		bin := t.TempDir()
		untar := exec.Command("tar", "-xzf", filepath.Join(dist, ps[0].archive(v)), "-C", bin)
		if out, err := untar.CombinedOutput(); err != nil {
			t.Fatalf("tar: %v\n%s", err, out)
		}
		expectVersion(t, kubectl, bin, clientVersionPrefix+v+" ")
	})
	t.Run("go install", func(t *testing.T) {
		gobin := t.TempDir()
		// -trimpath and CGO_ENABLED=0, as make build: the packages
		// compiled for the other binaries are reused.
		install := exec.Command("go", "install", "-trimpath", "./plugins/kubectl-ocm")
		install.Dir = root
		install.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0")
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("go install: %v\n%s", err, out)
		}
		expectVersion(t, kubectl, gobin, clientVersionPrefix)
	})
}

// expectVersion runs `kubectl ocm version --client` with PATH holding only bin and
// system directories and expects want in its output.
func expectVersion(t *testing.T, kubectl, bin, want string) {
	t.Helper()
	cmd := exec.Command(kubectl, "ocm", "version", "--client")
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + bin + ":" + systemPath, "HOME=" + home, "KUBECONFIG=" + filepath.Join(home, "none")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl ocm version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), want) {
		t.Fatalf("kubectl ocm version printed %q, want %q in it", out, want)
	}
}

// copySources copies the files of root's working tree that git does not
// ignore into a new directory and returns it, so that a second build shows
// whether anything of the first one's path leaks into the archive.
func copySources(t *testing.T, root string) string {
	t.Helper()
	out, err := git(root, "ls-files", "--cached", "--others", "--exclude-standard")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, name := range strings.Split(out, "\n") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
