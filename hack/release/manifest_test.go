package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSums gives every release platform's archive of version v a made-up
// sha256.
func fakeSums(v string) map[string]string {
	sums := map[string]string{}
	for i, p := range platforms {
		sums[p.archive(v)] = strings.Repeat(fmt.Sprintf("%x", i+10), 64)
	}
	return sums
}

// TestRenderManifest checks the generated manifest reads back as krew's
// Plugin with the values and layout krew-index reviews ask for.
func TestRenderManifest(t *testing.T) {
	const v, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	b, err := renderManifest(v, commit, platforms, fakeSums(v))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "ocm" {
		t.Errorf("apiVersion, kind, name = %s, %s, %s", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	if m.Spec.Homepage != homepage || m.Spec.ShortDescription != shortDescription || m.Spec.Description != description {
		t.Errorf("homepage, shortDescription or description differ:\n%s", b)
	}
	if m.Spec.Version != v || m.Commit != commit {
		t.Errorf("version, commit = %s, %s; want %s, %s", m.Spec.Version, m.Commit, v, commit)
	}
	if len(m.Spec.Platforms) != len(platforms) {
		t.Fatalf("%d platforms, want %d", len(m.Spec.Platforms), len(platforms))
	}
	for i, p := range platforms {
		item := m.Spec.Platforms[i]
		wantURI := "https://github.com/kubectl-ocm/kubectl-ocm/releases/download/v1.2.3/" + p.archive(v)
		if item.URI != wantURI || item.SHA256 != fakeSums(v)[p.archive(v)] || item.Bin != p.binary() {
			t.Errorf("platform %s: uri %s, sha256 %s, bin %s", p, item.URI, item.SHA256, item.Bin)
		}
		if m.Platforms[i] != p {
			t.Errorf("platform %d selects %s, want %s", i, m.Platforms[i], p)
		}
		var from []string
		for _, f := range item.Files {
			from = append(from, f.From)
			if f.To != "." {
				t.Errorf("platform %s: %s goes to %q, not the plugin directory", p, f.From, f.To)
			}
		}
		if got, want := strings.Join(from, ","), p.binary()+",kubectl_complete-ocm,LICENSE"; got != want {
			t.Errorf("platform %s files %s, want %s", p, got, want)
		}
	}
	if !strings.Contains(m.Spec.Caveats, indent(2, completionInstall(v))) || !strings.Contains(m.Spec.Caveats, indent(2, completionRemove())) {
		t.Errorf("caveats do not give the completion commands:\n%s", m.Spec.Caveats)
	}
}

// TestManifestStyle holds the text to krew's manifest guidelines: a short
// description of a few words without the redundant "kubectl" or "plugin",
// and description and caveats wrapped at 80 columns.
func TestManifestStyle(t *testing.T) {
	if n := len(strings.Fields(shortDescription)); n > 8 || strings.ContainsAny(shortDescription, ".\n") {
		t.Errorf("shortDescription %q: want a few words, one line, no full stop", shortDescription)
	}
	for _, w := range []string{"kubectl", "plugin"} {
		if strings.Contains(strings.ToLower(shortDescription), w) {
			t.Errorf("shortDescription %q repeats %q", shortDescription, w)
		}
	}
	for name, text := range map[string]string{"description": description, "caveats": caveats("v10.20.30-rc.1")} {
		for l := range strings.SplitSeq(text, "\n") {
			if len(l) > 80 {
				t.Errorf("%s line of %d columns: %q", name, len(l), l)
			}
		}
	}
}

// TestRenderManifestMissingSum refuses a platform without an archive.
func TestRenderManifestMissingSum(t *testing.T) {
	sums := fakeSums("v1.0.0")
	delete(sums, platforms[1].archive("v1.0.0"))
	_, err := renderManifest("v1.0.0", "c", platforms, sums)
	require.ErrorContains(t, err, "linux_arm64", "the error names the linux/arm64 archive")
}

// TestCheckVersion accepts krew's semantic versions only.
func TestCheckVersion(t *testing.T) {
	tests := []struct {
		version string
		ok      bool
	}{
		{"v0.1.0", true},
		{"v1.2.3-rc.1", true},
		{"v1.2.3+build.5", true},
		{"0.1.0", false},
		{"v0.1", false},
		{"cf34dfa-dirty", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			err := checkVersion(tt.version)
			if (err == nil) != tt.ok {
				t.Fatalf("checkVersion(%q) = %v, want ok %v", tt.version, err, tt.ok)
			}
			if err != nil {
				assert.ErrorContains(t, err, "VERSION=v0.1.0", "the error says how to give a version")
			}
		})
	}
}

// renderAsBot renders the release bot's template the way krew-release-bot
// does (text/template with the data {TagName} and addURIAndSha writing
// "uri: <url>\n    sha256: <sum>"), with the sums of sums by archive name.
func renderAsBot(t *testing.T, tmpl []byte, tag string, sums map[string]string) []byte {
	t.Helper()
	funcs := template.FuncMap{"addURIAndSha": func(url, tag string) (string, error) {
		var u bytes.Buffer
		if err := template.Must(template.New("url").Parse(url)).Execute(&u, struct{ TagName string }{tag}); err != nil {
			return "", err
		}
		sum, ok := sums[filepath.Base(u.String())]
		if !ok {
			return "", fmt.Errorf("no archive %s", u.String())
		}
		return fmt.Sprintf("uri: %s\n    sha256: %s", u.String(), sum), nil
	}}
	tpl, err := template.New(".krew.yaml").Funcs(funcs).Parse(string(tmpl))
	if err != nil {
		t.Fatalf("the release bot cannot parse .krew.yaml: %v", err)
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, struct{ TagName string }{tag}); err != nil {
		t.Fatalf("the release bot cannot render .krew.yaml: %v", err)
	}
	return b.Bytes()
}

// withoutHeader drops the comment lines that open a manifest.
func withoutHeader(b []byte) string {
	s := string(b)
	for strings.HasPrefix(s, "#") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}

// TestBotTemplate checks the checked-in .krew.yaml is what the generator
// writes, and that krew-release-bot renders it, for any tag, into the very
// manifest make release writes for that version (below the header comment).
func TestBotTemplate(t *testing.T) {
	want, err := renderBotTemplate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot(t), ".krew.yaml"))
	if err != nil {
		t.Fatalf("%v: run make release", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf(".krew.yaml differs from what make release writes: run make release\n%s", diffLines(string(want), string(got)))
	}
	for _, tag := range []string{"v0.1.0", "v2.0.0-rc.1"} {
		sums := fakeSums(tag)
		manifest, err := renderManifest(tag, "c", platforms, sums)
		if err != nil {
			t.Fatal(err)
		}
		if rendered := renderAsBot(t, want, tag, sums); withoutHeader(rendered) != withoutHeader(manifest) {
			t.Errorf("the bot's manifest for %s differs from make release's:\n%s", tag, diffLines(withoutHeader(manifest), withoutHeader(rendered)))
		}
	}
}

// diffLines shows the first line where got departs from want.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}
