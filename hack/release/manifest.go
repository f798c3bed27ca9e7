package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

const (
	// pluginName is the plugin's name in krew: `kubectl krew install ocm`.
	pluginName = "ocm"
	// completionScript is the completion shim kubectl runs for `kubectl ocm <TAB>`.
	completionScript = "kubectl_complete-ocm"
	// releaseURL is where release archives are downloaded from, followed by
	// /<version>/<archive>.
	releaseURL = "https://github.com/kubectl-ocm/kubectl-ocm/releases/download"
	// homepage is the plugin's homepage in the manifest.
	homepage = "https://github.com/kubectl-ocm/kubectl-ocm"
	// shortDescription is krew's one-line tagline (`kubectl krew search`):
	// a few words, without the redundant "kubectl" or "plugin".
	shortDescription = "Manage clusters with Open Cluster Management APIs"
	// description tells a user what the plugin is for, in lines of at most 80
	// columns, without listing its commands (`kubectl ocm --help` does).
	description = `Manage a fleet of Kubernetes clusters from one hub cluster with the Open
Cluster Management (OCM) APIs: set up a hub, join and accept clusters, group
them into cluster sets, place work on them with placements and rollouts, and
run add-ons. It speaks OCM's API groups and kinds, so OCM manifests and
scripts keep working; the hub and the cluster agents run as one small
controller, ocm-controller.
`
	// krewRoot is krew's root directory, in the shell's words.
	krewRoot = `${KREW_ROOT:-$HOME/.krew}`
)

// completionInstall is the shell command the caveats give to put
// kubectl_complete-ocm of version v on PATH beside the plugin. It copies
// rather than links the shim: the copy runs the kubectl-ocm beside it, the
// link krew keeps current, so it outlives `kubectl krew upgrade`.
func completionInstall(v string) string {
	return fmt.Sprintf("cp \"%s/store/%s/%s/%s\" \\\n  \"%s/bin/\"", krewRoot, pluginName, v, completionScript, krewRoot)
}

// completionRemove is the shell command the caveats give to remove it again.
func completionRemove() string {
	return fmt.Sprintf("rm -f \"%s/bin/%s\"", krewRoot, completionScript)
}

// caveats is shown by krew after installing version v: the one extra step,
// putting the completion shim on PATH, since krew links only the plugin.
func caveats(v string) string {
	return fmt.Sprintf(`kubectl 1.26 or later completes "kubectl ocm <TAB>", with kubectl's shell
completion set up, when %s is on PATH beside the plugin.
On Linux and macOS, put it there with:

%s

To remove it, before or after "kubectl krew uninstall ocm":

%s
`, completionScript, indent(2, completionInstall(v)), indent(2, completionRemove()))
}

// manifestPlatform is one spec.platforms item of the manifest.
type manifestPlatform struct {
	platform
	// Bin is the plugin executable inside the archive.
	Bin string
	// Source is the item's uri and sha256 lines, or the release bot's call
	// that writes them.
	Source string
}

// manifestData is what manifestTemplate renders.
type manifestData struct {
	// Header is the comment block at the top of the file.
	Header string
	// Version is spec.version.
	Version string
	// Description is spec.description.
	Description string
	// Caveats is spec.caveats.
	Caveats string
	// Platforms are spec.platforms.
	Platforms []manifestPlatform
}

// manifestTemplate writes a krew plugin manifest. It lays the file out the
// way krew-release-bot's addURIAndSha expects: a platform's fields at four
// spaces, so the "uri: ...\n    sha256: ..." it writes lines up.
var manifestTemplate = template.Must(template.New("manifest").Funcs(template.FuncMap{"indent": indent}).Parse(
	`{{ .Header }}apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ` + pluginName + `
spec:
  version: {{ .Version }}
  homepage: ` + homepage + `
  shortDescription: ` + shortDescription + `
  description: |
{{ indent 4 .Description }}
  caveats: |
{{ indent 4 .Caveats }}
  platforms:
{{- range .Platforms }}
  - selector:
      matchLabels:
        os: {{ .OS }}
        arch: {{ .Arch }}
    {{ .Source }}
    bin: {{ .Bin }}
    files:
    - from: {{ .Bin }}
      to: .
    - from: ` + completionScript + `
      to: .
    - from: LICENSE
      to: .
{{- end }}
`))

// indent prefixes every non-empty line of s with n spaces and drops s's
// trailing newline.
func indent(n int, s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat(" ", n) + l
		}
	}
	return strings.Join(lines, "\n")
}

// sourceLines are a platform's uri and sha256 lines, as the release bot's
// addURIAndSha writes them.
func sourceLines(uri, sha string) string {
	return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sha)
}

// archiveURI is where the archive of p at version v is downloaded from.
func archiveURI(v string, p platform) string {
	return releaseURL + "/" + v + "/" + p.archive(v)
}

// manifestHeader is the comment that opens the checked-in manifest; it
// records the commit the archives were built from.
func manifestHeader(v, commit string) string {
	return fmt.Sprintf(`# The krew plugin manifest of kubectl-ocm %s, written by
# "make release VERSION=%s" (hack/release) from commit
# %s.
# Do not edit: change hack/release and release again.
`, v, v, commit)
}

// manifestHeaderRE reads the version and commit back from manifestHeader.
var manifestHeaderRE = regexp.MustCompile(`(?m)^# "make release VERSION=(\S+)" \(hack/release\) from commit\n# ([0-9a-f]{40})\.\n`)

// renderManifest writes the manifest of version v, built from commit, for
// the platforms whose archives have the given sha256 sums (archive file
// name to sum). A platform without a sum is an error.
func renderManifest(v, commit string, ps []platform, sums map[string]string) ([]byte, error) {
	items := make([]manifestPlatform, 0, len(ps))
	for _, p := range ps {
		sum, ok := sums[p.archive(v)]
		if !ok {
			return nil, fmt.Errorf("no sha256 for %s: build its archive first", p.archive(v))
		}
		items = append(items, manifestPlatform{platform: p, Bin: p.binary(), Source: sourceLines(archiveURI(v, p), sum)})
	}
	return execute(manifestData{Header: manifestHeader(v, commit), Version: v, Description: description, Caveats: caveats(v), Platforms: items})
}

// botTag is krew-release-bot's template variable for the release tag.
const botTag = "{{ .TagName }}"

// botTemplateHeader opens .krew.yaml.
const botTemplateHeader = `# krew-release-bot's template of the krew plugin manifest: on a release tag,
# the bot renders it (.TagName is the tag; addURIAndSha downloads the archive
# and writes its uri and sha256) and opens the version bump in krew-index.
# Written by "make release" (hack/release), which writes the same manifest
# for krew-index/plugins/ocm.yaml; do not edit.
`

// renderBotTemplate writes .krew.yaml, the release bot's template: the
// manifest of every release platform with the tag and the archives' uri and
// sha256 left to the bot.
func renderBotTemplate() ([]byte, error) {
	items := make([]manifestPlatform, 0, len(platforms))
	for _, p := range platforms {
		call := fmt.Sprintf("{{ addURIAndSha %q .TagName }}", archiveURI(botTag, p))
		items = append(items, manifestPlatform{platform: p, Bin: p.binary(), Source: call})
	}
	return execute(manifestData{Header: botTemplateHeader, Version: botTag, Description: description, Caveats: caveats(botTag), Platforms: items})
}

// execute renders manifestTemplate with d.
func execute(d manifestData) ([]byte, error) {
	var b bytes.Buffer
	if err := manifestTemplate.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("render the krew manifest: %w", err)
	}
	return b.Bytes(), nil
}

// plugin is the part of krew's Plugin manifest this program reads back.
type plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// releasedManifest is what a checked-in manifest says about its release.
type releasedManifest struct {
	plugin
	// Commit is the commit the archives were built from, from the header.
	Commit string
	// Platforms are the platforms listed, in order.
	Platforms []platform
	// Sums are the archives' sha256 sums by archive file name.
	Sums map[string]string
}

// parseManifest reads a manifest this program wrote.
func parseManifest(b []byte) (*releasedManifest, error) {
	var m releasedManifest
	if err := yaml.UnmarshalStrict(b, &m.plugin); err != nil {
		return nil, fmt.Errorf("parse the krew manifest: %w", err)
	}
	h := manifestHeaderRE.FindSubmatch(b)
	if h == nil {
		return nil, fmt.Errorf("the krew manifest has no header naming its release commit: write it with make release")
	}
	if string(h[1]) != m.Spec.Version {
		return nil, fmt.Errorf("the krew manifest's header names version %s but spec.version is %s: write it with make release", h[1], m.Spec.Version)
	}
	m.Commit = string(h[2])
	m.Sums = map[string]string{}
	for _, item := range m.Spec.Platforms {
		p := platform{OS: item.Selector.MatchLabels["os"], Arch: item.Selector.MatchLabels["arch"]}
		m.Platforms = append(m.Platforms, p)
		m.Sums[p.archive(m.Spec.Version)] = item.SHA256
	}
	return &m, nil
}
