// Package version holds the build identity of kubectl-ocm binaries. The values
// are stamped at link time with -ldflags "-X ...".
package version

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"sigs.k8s.io/yaml"
)

// These are set by the linker (see the Makefile's LDFLAGS).
var (
	// Version is the release version, for example v0.1.0, or a git describe string.
	Version = unstamped
	// GitCommit is the full commit hash the binary was built from.
	GitCommit = "unknown"
	// BuildDate is the UTC build time in RFC 3339 form.
	BuildDate = "unknown"
)

// VersionSymbol is the linker's name of Version, for -ldflags "-X".
const VersionSymbol = "github.com/kubectl-ocm/kubectl-ocm/pkg/version.Version"

// StampFlags are the `go build` flags that stamp v as Version, as the
// Makefile's build does (without the commit and date).
func StampFlags(v string) []string {
	return []string{"-ldflags", "-X " + VersionSymbol + "=" + v}
}

// unstamped is Version in a binary the linker did not stamp.
const unstamped = "v0.0.0-dev"

func init() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		Version = moduleVersion(Version, bi.Main.Version)
	}
}

// moduleVersion returns the version of a binary stamped with stamped whose
// main module has version module in its build information: stamped, unless
// the linker did not stamp it and the module has a version, as a binary
// built by `go install <module>/plugins/kubectl-ocm@v0.1.0` has.
func moduleVersion(stamped, module string) string {
	if stamped != unstamped || module == "" || module == "(devel)" {
		return stamped
	}
	return module
}

// Info is the structured build identity printed by the `version` subcommands.
type Info struct {
	// Version is the release version.
	Version string `json:"version"`
	// GitCommit is the commit the binary was built from.
	GitCommit string `json:"gitCommit"`
	// BuildDate is when the binary was built.
	BuildDate string `json:"buildDate"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the build identity of the running binary.
func Get() Info {
	return Info{
		Version:   Version,
		GitCommit: GitCommit,
		BuildDate: BuildDate,
		GoVersion: runtime.Version(),
		Platform:  fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}

// String renders the identity on one line.
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s, %s)", i.Version, i.GitCommit, i.BuildDate, i.GoVersion, i.Platform)
}

// Print writes the identity to w in the given format: "" (one line), "json" or "yaml".
func Print(w io.Writer, prefix, format string) error {
	info := Get()
	switch format {
	case "":
		_, err := fmt.Fprintf(w, "%s %s\n", prefix, info)
		return err
	case "json":
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(info)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return fmt.Errorf("unknown output format %q: use one of json, yaml", format)
	}
}

// maxImageTag is the longest tag an image reference may carry.
const maxImageTag = 128

// ImageTag returns the image tag of version v: v itself when it is a valid
// tag, as release versions (v0.1.0) and git describe output
// (v0.1.0-3-gabc1234-dirty) are; otherwise v with every character a tag may
// not hold (such as the + of semver build metadata) replaced by -, a leading
// . or - replaced by _, and cut to 128 characters. An empty v gives the tag
// of the default Version.
func ImageTag(v string) string {
	if v == "" {
		v = unstamped
	}
	b := []byte(v)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		case c == '.' || c == '-':
			b[i] = '_'
		default:
			b[i] = '-'
		}
	}
	if len(b) > maxImageTag {
		b = b[:maxImageTag]
	}
	return string(b)
}
