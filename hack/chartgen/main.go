// Command chartgen writes the templates of the Helm charts under
// config/charts from the manifests the plugin embeds, so that a chart and
// the verbs install the same objects from one source (make generate runs
// it; make verify fails when its output is stale).
//
// Chart hub holds what `hub init` writes: the manifests of
// config/hub-operator (the ClusterManager operator and the ClusterManager).
// Chart klusterlet holds what `join` writes: the manifests of
// config/klusterlet-operator (the Klusterlet operator) and those of
// config/agent that join writes next to it (the agent's namespace, the
// bootstrap kubeconfig Secret and the Klusterlet). Each manifest becomes a
// chart template that builds, in the chart's _helpers.tpl, the values the Go
// renderer passes (HubOperatorValues, KlusterletOperatorValues, AgentValues)
// from .Values and executes the manifest with them; the labels the Go
// renderer adds (the part-of label on every object, the Pod Security labels
// of pkg/podsecurity on every Namespace) are written into each object's
// metadata. A chart's CRD is the one of its resource, from config/crd/bases;
// the operator installs the others.
//
// Every chart also gets the parts that only a chart has, from the files next
// to this one: _operatorpod.tpl builds the overrides of the operator's Pod
// (config.OperatorPod) from the values and fails on those that break
// restricted Pod Security, and image-pull-credentials.yaml creates the
// image pull credentials Secret of images.imageCredentials.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// chart is one chart: the manifests its templates are made of and its CRDs.
type chart struct {
	name    string
	sources []source
	crds    func() ([]*apiextensionsv1.CustomResourceDefinition, error)
}

// source is one directory of config whose manifests become templates of a
// chart, executed with the values the chart's helper
// "kubectl-ocm.<values>.values" builds; keep, when set, picks the files.
type source struct {
	dir    string
	values string
	keep   func(file string) (bool, error)
}

// chartOnly are the templates every chart gets as they are, by file name.
var chartOnly = map[string]string{
	"_operatorpod.tpl":            operatorPodTemplate,
	"image-pull-credentials.yaml": imagePullCredentialsTemplate,
}

var (
	//go:embed operatorpod.tpl
	operatorPodTemplate string
	//go:embed imagepullcredentials.yaml.tpl
	imagePullCredentialsTemplate string
)

var charts = []chart{
	{name: "hub", sources: []source{{dir: "hub-operator", values: "hub"}}, crds: oneCRD(config.ClusterManagersCRDName)},
	{name: "klusterlet", sources: []source{
		{dir: "klusterlet-operator", values: "klusterlet.operator"},
		{dir: "agent", values: "klusterlet", keep: klusterletInstallFile},
	}, crds: oneCRD(config.KlusterletsCRDName)},
}

// oneCRD returns the CRDs of a chart whose operator installs every other
// CRD: the one of its own resource.
func oneCRD(name string) func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
		crd, err := config.CRD(name)
		if err != nil {
			return nil, err
		}
		return []*apiextensionsv1.CustomResourceDefinition{crd}, nil
	}
}

// klusterletInstallFile reports whether the agent manifest file holds what
// `kubectl ocm join` writes next to the Klusterlet operator
// (config.IsKlusterletInstallObject): rendered with sample values, each of
// its objects is one, or none is; a file mixing both is an error.
func klusterletInstallFile(file string) (bool, error) {
	objs, err := config.RenderFile(file, config.AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("kubeconfig")})
	if err != nil {
		return false, err
	}
	n := 0
	for _, obj := range objs {
		if config.IsKlusterletInstallObject(obj) {
			n++
		}
	}
	if n != 0 && n != len(objs) {
		return false, fmt.Errorf("%s mixes objects the user writes with objects the operator renders; split it", file)
	}
	return n > 0, nil
}

func main() {
	for _, c := range charts {
		if err := generate("config", c); err != nil {
			fmt.Fprintf(os.Stderr, "chartgen: chart %s: %v\n", c.name, err)
			os.Exit(1)
		}
	}
}

// generate rewrites every generated template of chart c under
// <root>/charts/<name>/templates.
func generate(root string, c chart) error {
	dir := filepath.Join(root, "charts", c.name, "templates")
	for _, sub := range []string{dir, filepath.Join(dir, "crds")} {
		old, err := filepath.Glob(filepath.Join(sub, "*.yaml"))
		if err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "crds"), 0o755); err != nil {
		return err
	}
	for _, src := range c.sources {
		manifests, err := filepath.Glob(filepath.Join(root, src.dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, file := range manifests {
			if src.keep != nil {
				ok, err := src.keep(path.Join(src.dir, filepath.Base(file)))
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			// Two sources may hold files of the same name.
			name := filepath.Base(file)
			if len(c.sources) > 1 {
				name = src.dir + "-" + name
			}
			out := wrap(src.values, file, withRenderedLabels(string(raw)))
			if err := os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644); err != nil {
				return err
			}
		}
	}
	for name, text := range chartOnly {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	crds, err := c.crds()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := writeCRD(root, filepath.Join(dir, "crds"), c.name, crd.Name, crd.Spec.Group); err != nil {
			return err
		}
	}
	return nil
}

// wrap makes manifest src a template of chart name: it executes src with the
// values the chart's helper "kubectl-ocm.<name>.values" builds from .Values.
func wrap(name, src, body string) string {
	return fmt.Sprintf(`{{- /* Generated by make generate from %s: edit that file, not this one. */ -}}
{{- $v := dict -}}
{{- $_ := include "kubectl-ocm.%s.values" (list . $v) -}}
{{- with $v }}
%s{{- end }}
`, filepath.ToSlash(src), name, body)
}

// writeCRD copies the CRD file of name into dir with the part-of label, as
// config.HubObjects and config.AgentObjects give it; for a CRD the hub
// converts, it adds the conversion stanza of conversion.WebhookConversion.
func writeCRD(root, dir, chartName, name, group string) error {
	plural, _, _ := strings.Cut(name, ".")
	file := group + "_" + plural + ".yaml"
	raw, err := os.ReadFile(filepath.Join(root, "crd", "bases", file))
	if err != nil {
		return err
	}
	text := string(raw)
	if strings.Contains(text, "{{") || strings.Contains(text, "}}") {
		return fmt.Errorf("CRD file %s holds template delimiters {{ or }}, which a chart template cannot copy as they are", file)
	}
	text = withLabels(text, []string{partOfLabel})
	if conversion.IsConverted(name) {
		stanza, err := conversionStanza()
		if err != nil {
			return err
		}
		if !strings.Contains(text, "\nspec:\n") {
			return fmt.Errorf("CRD file %s has no top-level spec", file)
		}
		text = strings.Replace(text, "\nspec:\n", "\nspec:\n"+stanza, 1)
		text = wrap(chartName, filepath.Join(root, "crd", "bases", file), text)
	}
	return os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644)
}

// conversionStanza is spec.conversion as conversion.WebhookConversion makes
// it, to a URL or to the webhook's Service in the hub namespace, as template
// text indented under spec.
func conversionStanza() (string, error) {
	const nsMark, urlMark = "HUB_NAMESPACE_MARK", "CONVERSION_URL_MARK"
	toService, err := yaml.Marshal(conversion.WebhookConversion(nsMark, ""))
	if err != nil {
		return "", err
	}
	toURL, err := yaml.Marshal(conversion.WebhookConversion(nsMark, urlMark))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString("  conversion:\n{{- if .ConversionWebhookURL }}\n")
	b.WriteString(indent(strings.ReplaceAll(string(toURL), urlMark, "{{ quote .ConversionWebhookURL }}"), "    "))
	b.WriteString("{{- else }}\n")
	b.WriteString(indent(strings.ReplaceAll(string(toService), nsMark, "{{ .HubNamespace }}"), "    "))
	b.WriteString("{{- end }}\n")
	return b.String(), nil
}

func indent(s, pad string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// partOfLabel is the label the Go renderer adds to every object.
var partOfLabel = apply.PartOfLabelKey + ": " + apply.PartOfLabelValue

// podSecurityLabels are the labels the Go renderer adds to every Namespace
// (podsecurity.Labels), as YAML lines sorted by key.
func podSecurityLabels() []string {
	labels := podsecurity.Labels()
	out := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+": "+labels[k])
	}
	return out
}

// withRenderedLabels writes into a manifest the labels the Go renderer
// (config.RenderFile) adds: the part-of label on every object, and the Pod
// Security labels on every Namespace whose manifest sets none.
func withRenderedLabels(manifest string) string {
	docs := strings.SplitAfter(manifest, "\n---\n")
	for i, doc := range docs {
		labels := []string{partOfLabel}
		if slices.Contains(strings.Split(doc, "\n"), "kind: Namespace") && !strings.Contains(doc, podsecurity.LabelPrefix) {
			labels = append(labels, podSecurityLabels()...)
		}
		docs[i] = withLabels(doc, labels)
	}
	return strings.Join(docs, "")
}

// withLabels writes the labels (each a "key: value" line) into the metadata
// of every object of a manifest that lacks them: under its labels, or in a
// new labels block.
func withLabels(manifest string, labels []string) string {
	lines := strings.SplitAfter(manifest, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		if strings.TrimRight(lines[i], "\n") != "metadata:" {
			continue
		}
		block := metadataBlock(lines[i+1:])
		child := "  "
		if len(block) > 0 {
			child = leading(block[0])
		}
		at := slices.IndexFunc(block, func(l string) bool { return strings.TrimRight(l, "\n") == child+"labels:" })
		if at < 0 {
			out = append(out, child+"labels:\n")
			for _, l := range labels {
				out = append(out, child+"  "+l+"\n")
			}
			continue
		}
		have := labelLines(block[at+1:], child)
		pad := child + "  "
		if len(have) > 0 {
			pad = leading(have[0])
		}
		out = append(out, block[:at+1]...)
		for _, l := range labels {
			if !slices.ContainsFunc(have, func(h string) bool { return strings.TrimSpace(h) == l }) {
				out = append(out, pad+l+"\n")
			}
		}
		i += at + 1
	}
	return strings.Join(out, "")
}

// metadataBlock returns the indented lines that follow a metadata: line.
func metadataBlock(lines []string) []string {
	for i, l := range lines {
		if strings.TrimSpace(l) != "" && leading(l) == "" {
			return lines[:i]
		}
	}
	return lines
}

// labelLines returns the lines of the labels block, indented deeper than
// child.
func labelLines(lines []string, child string) []string {
	for i, l := range lines {
		if len(leading(l)) <= len(child) {
			return lines[:i]
		}
	}
	return lines
}

func leading(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " "))] }
