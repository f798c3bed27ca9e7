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

// archiveInputs are the git pathspecs of the files a release archive's
// bytes depend on, besides the commit stamped into the binary.
var archiveInputs = []string{"*.go", ":!*_test.go", "go.mod", "go.sum", "LICENSE", "kubectl_complete-ocm"}

// TestCheckedInManifest checks krew-index/plugins/ocm.yaml is what
// `make release` writes. The manifest is a function of its version, the
// commit its archives were built from (recorded in its header) and the
// archives' sha256 sums; the sums themselves can be recomputed only from the
// source they were built from, since the binaries embed their commit. So:
//
//   - always: regenerating the manifest from the checked-in version, commit
//     and sums gives the whole file byte for byte (any hand edit, or a change
//     to the generator's text, URIs, layout or platforms not released again,
//     fails), it lists every release platform, and validate-krew-manifest
//     accepts it (without -short);
//   - the Helm charts are at the manifest's version (make release sets it);
//   - when the archives' inputs (archiveInputs: the Go sources but tests,
//     go.mod, go.sum, LICENSE and kubectl_complete-ocm) are those of the
//     recorded commit, as on the commit that checks the manifest in after
//     `make release` and on later commits that change only documents or
//     tests: rebuilding this machine's archive gives the recorded sum
//     exactly (without -short; `make release` itself rebuilds and checks
//     every platform).
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
	// Whether the sources are those the archives were built from.
	cmd := exec.Command("git", append([]string{"diff", "--quiet", m.Commit, "--"}, archiveInputs...)...)
	cmd.Dir = root
	if err := cmd.Run(); err != nil {
		t.Logf("the archives' inputs differ from release commit %s (%v): the sha256 sums are checked while they are the same", m.Commit, err)
		return
	}
	s, err := releaseStamp(root, m.Spec.Version, m.Commit, os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		t.Fatal(err)
	}
	host := platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(platforms, host) {
		t.Logf("%s is not a release platform: the sha256 sums are checked by make release", host)
		return
	}
	sums, err := packageAll(root, t.TempDir(), []platform{host}, s)
	if err != nil {
		t.Fatal(err)
	}
	name := host.archive(m.Spec.Version)
	if sums[name] != m.Sums[name] {
		t.Errorf("%s rebuilt from %s has sha256 %s, the manifest says %s", name, m.Commit, sums[name], m.Sums[name])
	}
}

// TestRelease packages the plugin for linux/amd64 (this platform) with a
// test version, twice, and expects the same archive and checksums.txt; then
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
	for range 2 {
		dist := t.TempDir()
		if _, err := packageAll(root, dist, ps, s); err != nil {
			t.Fatal(err)
		}
		dists = append(dists, dist)
	}
	for _, name := range []string{ps[0].archive(v), checksumsFile} {
		a, errA := os.ReadFile(filepath.Join(dists[0], name))
		b, errB := os.ReadFile(filepath.Join(dists[1], name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("two release runs of one commit wrote different %s (%v, %v)", name, errA, errB)
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
