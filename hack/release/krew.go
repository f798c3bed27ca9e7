package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// krewTools is the Go module, apart from the main module and its
// dependencies, that pins krew's own commands: validate-krew-manifest (a
// tool of the module) and krew.
const krewTools = "hack/tools/krew"

// systemPath is the PATH the install check adds the krew bin directory to:
// system directories only, so nothing else installed on the machine is found.
const systemPath = "/usr/bin:/bin"

// clientVersionPrefix opens the plugin's version in `kubectl ocm version --client`.
const clientVersionPrefix = "Client Version: "

// completedVerbs are verbs `kubectl ocm <TAB>` must offer.
var completedVerbs = []string{"accept", "get", "hub", "join", "version", "work"}

// checkInput names a release to check.
type checkInput struct {
	// manifest is the krew plugin manifest (its file name must be ocm.yaml).
	manifest string
	// dist holds the archives the manifest lists.
	dist string
	// version is the release version.
	version string
	// platforms are the platforms the release was built for.
	platforms []platform
	// kubectl is the kubectl binary the plugin is run through.
	kubectl string
	// logf reports progress.
	logf func(format string, args ...any)
}

// checkRelease checks a release with krew's own tools: validate-krew-manifest
// on the manifest, then again installing every platform's archive (with
// KREW_OS and KREW_ARCH) from a loopback copy of the download location, which
// also checks LICENSE is installed; and, for the platform this runs on, the
// whole life of the plugin under krew (installCheck).
func checkRelease(root string, in checkInput) error {
	manifest, err := filepath.Abs(in.manifest)
	if err != nil {
		return err
	}
	in.logf("validate-krew-manifest %s", in.manifest)
	if err := validateManifest(root, manifest, true, nil); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kubectl-ocm-krew-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	krew := filepath.Join(tmp, "krew")
	in.logf("building krew from %s", krewTools)
	if err := buildKrew(root, krew); err != nil {
		return err
	}
	in.logf("validate-krew-manifest installing every platform's archive")
	if err := validateInstalls(root, manifest, in.dist, in.version, in.kubectl, krew, tmp); err != nil {
		return err
	}
	host := platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	for _, p := range in.platforms {
		if p == host {
			in.logf("krew install, kubectl ocm version, completion and krew uninstall on %s", p)
			return installCheck(krew, in.kubectl, manifest, filepath.Join(in.dist, p.archive(in.version)), in.version, tmp)
		}
	}
	in.logf("no archive for %s: the krew install check runs on that platform only", host)
	return nil
}

// validateManifest runs validate-krew-manifest from the tools module on
// manifest (an absolute path), with skipInstall as -skip-install and env
// added to the environment.
func validateManifest(root, manifest string, skipInstall bool, env []string) error {
	args := []string{"-C", filepath.Join(root, krewTools), "tool", "validate-krew-manifest", "-manifest", manifest}
	if skipInstall {
		args = append(args, "-skip-install")
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("validate-krew-manifest %s: %w\n%s", manifest, err, out)
	}
	return nil
}

// buildKrew builds krew from the tools module into out.
func buildKrew(root, out string) error {
	cmd := exec.Command("go", "-C", filepath.Join(root, krewTools), "build", "-o", out, "sigs.k8s.io/krew/cmd/krew")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build krew: %w\n%s", err, b)
	}
	return nil
}

// validateInstalls runs validate-krew-manifest with its install step, which
// runs `kubectl krew install --manifest` for every platform and downloads
// each archive from its uri. The archives of dist are served on a loopback
// address and a copy of manifest points there; kubectl and krew (as the
// kubectl-krew plugin) are the only commands added to PATH.
func validateInstalls(root, manifest, dist, v, kubectl, krew, tmp string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve the archives: %w", err)
	}
	var mu sync.Mutex
	served := map[string]bool{}
	files := http.FileServer(http.Dir(dist))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[strings.TrimPrefix(r.URL.Path, "/")] = true
		mu.Unlock()
		files.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	b, err := os.ReadFile(manifest)
	if err != nil {
		return fmt.Errorf("read the manifest: %w", err)
	}
	local := bytes.ReplaceAll(b, []byte(releaseURL+"/"+v+"/"), []byte("http://"+ln.Addr().String()+"/"))
	dir := filepath.Join(tmp, "served")
	localManifest := filepath.Join(dir, pluginName+".yaml")
	if err := writeFile(localManifest, local); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "validate-bin")
	if err := linkCommands(bin, map[string]string{"kubectl": kubectl, "kubectl-krew": krew}); err != nil {
		return err
	}
	if err := validateManifest(root, localManifest, false, []string{"PATH=" + bin + ":" + systemPath}); err != nil {
		return err
	}
	// Every archive the manifest lists was downloaded, so installed.
	m, err := parseManifest(b)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for name := range m.Sums {
		if !served[name] {
			return fmt.Errorf("validate-krew-manifest never downloaded %s, so did not install it", name)
		}
	}
	return nil
}

// linkCommands makes dir hold a symbolic link per name to its absolute target.
func linkCommands(dir string, links map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for name, target := range links {
		abs, err := filepath.Abs(target)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("%s not found: %w (kubectl comes from make kube-bins)", name, err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
	}
	return nil
}

// installCheck installs the plugin with `krew install --manifest --archive`
// under a new KREW_ROOT (with an empty local index), runs
// `kubectl ocm version --client` through kubectl with
// PATH holding only KREW_ROOT/bin and system directories and expects
// version v, follows the manifest's caveats to set up completion and
// expects `kubectl __complete ocm ""` to offer the verbs, then removes the
// completion shim as the caveats say, runs `krew uninstall ocm`, and expects
// no file named after the plugin left under KREW_ROOT.
func installCheck(krew, kubectl, manifest, archive, v, tmp string) error {
	krewRoot := filepath.Join(tmp, "krew-root")
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	kubectl, err := filepath.Abs(kubectl)
	if err != nil {
		return err
	}
	env := []string{"KREW_ROOT=" + krewRoot, "HOME=" + home, "KUBECONFIG=" + filepath.Join(home, "no-kubeconfig"),
		"PATH=" + filepath.Join(krewRoot, "bin") + ":" + systemPath}
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), nil
	}

	// The index a `kubectl krew update` clones; uninstall requires one.
	if _, err := run("git", "init", "--quiet", filepath.Join(krewRoot, "index", "default")); err != nil {
		return err
	}
	if _, err := run(krew, "install", "--manifest="+manifest, "--archive="+archive); err != nil {
		return err
	}
	out, err := run(kubectl, "ocm", "version", "--client")
	if err != nil {
		return err
	}
	if !strings.Contains(out, clientVersionPrefix+v+" ") {
		return fmt.Errorf("kubectl ocm version printed %q, not version %s", out, v)
	}
	if _, err := run("/bin/sh", "-c", completionInstall(v)); err != nil {
		return fmt.Errorf("the caveats' completion step: %w", err)
	}
	out, err = run(kubectl, "__complete", "ocm", "")
	if err != nil {
		return err
	}
	for _, verb := range completedVerbs {
		if !hasCandidate(out, verb) {
			return fmt.Errorf("kubectl __complete ocm \"\" does not offer %q through %s:\n%s", verb, completionScript, out)
		}
	}
	if _, err := run("/bin/sh", "-c", completionRemove()); err != nil {
		return fmt.Errorf("the caveats' completion removal: %w", err)
	}
	if _, err := run(krew, "uninstall", pluginName); err != nil {
		return err
	}
	return leftovers(krewRoot)
}

// hasCandidate reports whether cobra's __complete output offers word.
func hasCandidate(out, word string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		if name, _, _ := strings.Cut(line, "\t"); name == word {
			return true
		}
	}
	return false
}

// leftovers fails when any path under krewRoot is named after the plugin:
// its store directory, receipt, link or completion shim.
func leftovers(krewRoot string) error {
	var left []string
	err := filepath.WalkDir(krewRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), pluginName) {
			left = append(left, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk KREW_ROOT: %w", err)
	}
	if len(left) > 0 {
		return errors.New("krew uninstall ocm left behind:\n" + strings.Join(left, "\n"))
	}
	return nil
}
