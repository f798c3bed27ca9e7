package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
)

// module is the main module's path, which the version package lives in.
const module = "github.com/kubectl-ocm/kubectl-ocm"

// pluginPackage is the main package of the plugin binary.
const pluginPackage = "./plugins/kubectl-ocm"

// platform is one operating system and architecture a release is built for,
// named as GOOS and GOARCH (which are also krew's os and arch labels).
type platform struct {
	OS   string
	Arch string
}

// platforms are the targets of a release, in the order the manifest lists them.
var platforms = []platform{
	{"linux", "amd64"},
	{"linux", "arm64"},
	{"darwin", "amd64"},
	{"darwin", "arm64"},
	{"windows", "amd64"},
}

// String returns os/arch.
func (p platform) String() string { return p.OS + "/" + p.Arch }

// binary is the plugin executable's file name on p.
func (p platform) binary() string {
	if p.OS == "windows" {
		return "kubectl-ocm.exe"
	}
	return "kubectl-ocm"
}

// archive is the release archive's file name for p at version v.
func (p platform) archive(v string) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("kubectl-ocm_%s_%s_%s%s", v, p.OS, p.Arch, ext)
}

// parsePlatforms reads a comma-separated list of os/arch names; "" means all
// release platforms.
func parsePlatforms(s string) ([]platform, error) {
	if s == "" {
		return platforms, nil
	}
	var out []platform
	for name := range strings.SplitSeq(s, ",") {
		found := false
		for _, p := range platforms {
			if p.String() == name {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("platform %q is not a release platform: use some of %s", name, platformNames())
		}
	}
	return out, nil
}

// platformNames lists the release platforms for error messages.
func platformNames() string {
	names := make([]string, len(platforms))
	for i, p := range platforms {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

// checkVersion accepts a semantic version with a leading "v", as krew
// requires of a plugin version (v1.2.3, v1.2.3-rc.1).
func checkVersion(v string) error {
	if !strings.HasPrefix(v, "v") {
		return fmt.Errorf("version %q is not a release version: give a semantic version with a leading v, e.g. make release VERSION=v0.1.0", v)
	}
	if _, err := version.ParseSemantic(v); err != nil {
		return fmt.Errorf("version %q is not a semantic version (%w): give one like make release VERSION=v0.1.0", v, err)
	}
	return nil
}

// stamp is what the linker writes into a release binary.
type stamp struct {
	// Version is the release version.
	Version string
	// Commit is the full commit hash the binary is built from.
	Commit string
	// Date is the build date: SOURCE_DATE_EPOCH, by default the commit's time.
	Date time.Time
}

// ldflags returns the linker flags that strip the binary and stamp s into
// the version package.
func (s stamp) ldflags() string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", module + "/pkg/version.Version=" + s.Version,
		"-X", module + "/pkg/version.GitCommit=" + s.Commit,
		"-X", module + "/pkg/version.BuildDate=" + s.Date.UTC().Format(time.RFC3339),
	}, " ")
}

// buildBinary cross-builds the plugin for p into out, reproducibly: no cgo,
// no file system paths (-trimpath), no VCS stamp beyond s, and fixed
// architecture levels.
func buildBinary(root string, p platform, s stamp, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", s.ldflags(), "-o", out, pluginPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p, err, b)
	}
	return nil
}

// packagePlatform builds the plugin for p and writes its release archive into
// dist, returning the archive's path. The archive holds the binary, LICENSE
// and the kubectl_complete-ocm completion shim from the repository root.
func packagePlatform(root, dist string, p platform, s stamp) (string, error) {
	tmp, err := os.MkdirTemp("", "kubectl-ocm-release-")
	if err != nil {
		return "", fmt.Errorf("temporary build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bin := filepath.Join(tmp, p.binary())
	if err := buildBinary(root, p, s, bin); err != nil {
		return "", err
	}
	path := filepath.Join(dist, p.archive(s.Version))
	entries := []entry{
		{name: p.binary(), src: bin, mode: 0o755},
		{name: "LICENSE", src: filepath.Join(root, "LICENSE"), mode: 0o644},
		{name: completionScript, src: filepath.Join(root, completionScript), mode: 0o755},
	}
	if err := writeArchive(path, entries, s.Date); err != nil {
		return "", err
	}
	return path, nil
}
