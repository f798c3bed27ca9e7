// Command release builds a kubectl-ocm release: the plugin cross-built for
// every release platform into reproducible archives (.tar.gz, .zip for
// Windows) holding the binary, LICENSE and kubectl_complete-ocm, their
// checksums.txt, the krew plugin manifest krew-index/plugins/ocm.yaml made
// from the archives' sha256 sums, and .krew.yaml, the same manifest as a
// template for krew-release-bot; and it sets the version of the Helm charts
// under config/charts (their appVersion is the image tag they deploy). It then checks the manifest and every
// archive with krew's own tools (see checkRelease).
//
// `make release VERSION=vX.Y.Z` runs it from the repository root. The same
// commit gives the same bytes: the binaries are built with -trimpath,
// -buildvcs=false and no cgo, stamped with the version, the commit and
// SOURCE_DATE_EPOCH (by default the commit's time) as the build date, and the
// archives list their entries sorted, owned by root, with fixed modes and
// SOURCE_DATE_EPOCH as their time.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	version     string
	commit      string
	epoch       string
	dist        string
	manifest    string
	botTemplate string
	platforms   string
	kubectl     string
	check       bool
	allowDirty  bool
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "release version, a semantic version with a leading v (v0.1.0)")
	flag.StringVar(&o.commit, "commit", "", "commit stamped into the binaries (default: git rev-parse HEAD)")
	flag.StringVar(&o.epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "build date and archive time in Unix seconds (default: $SOURCE_DATE_EPOCH, else the commit's time)")
	flag.StringVar(&o.dist, "dist", "dist", "directory the archives and checksums.txt are written to")
	flag.StringVar(&o.manifest, "manifest", "krew-index/plugins/ocm.yaml", "krew plugin manifest written from the archives")
	flag.StringVar(&o.botTemplate, "bot-template", ".krew.yaml", "krew-release-bot template written beside it (empty: none)")
	flag.StringVar(&o.platforms, "platforms", "", "comma-separated os/arch list (default: every release platform)")
	flag.StringVar(&o.kubectl, "kubectl", "bin/kube/kubectl", "kubectl the install check runs the plugin through")
	flag.BoolVar(&o.check, "check", true, "check the manifest and archives with validate-krew-manifest and krew install")
	flag.BoolVar(&o.allowDirty, "allow-dirty", false, "release from a working tree with uncommitted changes")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// run makes the release o describes from the repository in the working
// directory.
func run(o options) error {
	if err := checkVersion(o.version); err != nil {
		return err
	}
	ps, err := parsePlatforms(o.platforms)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if !o.allowDirty {
		if err := checkClean(root); err != nil {
			return err
		}
	}
	s, err := releaseStamp(root, o.version, o.commit, o.epoch)
	if err != nil {
		return err
	}
	fmt.Printf("release %s of commit %s, dated %s\n", s.Version, s.Commit, s.Date.UTC().Format(time.RFC3339))
	sums, err := packageAll(root, o.dist, ps, s)
	if err != nil {
		return err
	}
	manifest, err := renderManifest(s.Version, s.Commit, ps, sums)
	if err != nil {
		return err
	}
	if err := writeFile(o.manifest, manifest); err != nil {
		return err
	}
	if o.botTemplate != "" {
		tmpl, err := renderBotTemplate()
		if err != nil {
			return err
		}
		if err := writeFile(o.botTemplate, tmpl); err != nil {
			return err
		}
	}
	if err := setChartVersions(root, s.Version); err != nil {
		return err
	}
	fmt.Printf("wrote %s, %s and the Helm charts' versions\n", o.manifest, filepath.Join(o.dist, checksumsFile))
	if !o.check {
		return nil
	}
	return checkRelease(root, checkInput{
		manifest: o.manifest, dist: o.dist, version: s.Version, platforms: ps, kubectl: o.kubectl,
		logf: func(format string, args ...any) { fmt.Printf(format+"\n", args...) },
	})
}

// checksumsFile is the name of the checksums file beside the archives.
const checksumsFile = "checksums.txt"

// packageAll writes the archive of every platform in ps and checksums.txt
// into dist, and returns the archives' sha256 sums by file name. Archives of
// earlier runs are removed first.
func packageAll(root, dist string, ps []platform, s stamp) (map[string]string, error) {
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dist, err)
	}
	old, _ := filepath.Glob(filepath.Join(dist, "kubectl-ocm_*"))
	for _, f := range append(old, filepath.Join(dist, checksumsFile)) {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("remove an earlier release file: %w", err)
		}
	}
	sums := map[string]string{}
	for _, p := range ps {
		fmt.Printf("building %s\n", p)
		path, err := packagePlatform(root, dist, p, s)
		if err != nil {
			return nil, err
		}
		if sums[filepath.Base(path)], err = sha256File(path); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(dist, checksumsFile), checksums(sums)); err != nil {
		return nil, err
	}
	return sums, nil
}

// releaseStamp resolves the commit (default HEAD) and the build date (epoch,
// default the commit's committer time) of a release of version v.
func releaseStamp(root, v, commit, epoch string) (stamp, error) {
	if commit == "" {
		out, err := git(root, "rev-parse", "HEAD")
		if err != nil {
			return stamp{}, err
		}
		commit = out
	}
	if epoch == "" {
		out, err := git(root, "log", "-1", "--format=%ct", commit)
		if err != nil {
			return stamp{}, err
		}
		epoch = out
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return stamp{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds: %w", epoch, err)
	}
	return stamp{Version: v, Commit: commit, Date: time.Unix(sec, 0).UTC()}, nil
}

// checkClean refuses a working tree whose tracked files differ from HEAD,
// other than the files a release writes: its binaries would not be those of
// the commit they are stamped with.
func checkClean(root string) error {
	out, err := git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!krew-index", ":!.krew.yaml")
	if err != nil {
		return err
	}
	if out != "" {
		return fmt.Errorf("the working tree has uncommitted changes, so the binaries would not match their commit:\n%s\ncommit them first (or pass -allow-dirty for a trial build)", out)
	}
	return nil
}

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %w %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}

// writeFile writes b to path, creating its directory.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
