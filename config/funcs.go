package config

import (
	"encoding/base64"
	"fmt"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Scheduling places a component's Pod and sizes its container, as the
// values nodeSelector, tolerations and resources of the Helm charts under
// config/charts do. Empty fields render nothing: the manifests keep their
// own defaults.
type Scheduling struct {
	// NodeSelector is the Pod's spec.nodeSelector.
	NodeSelector map[string]string
	// Tolerations are the Pod's spec.tolerations.
	Tolerations []corev1.Toleration
	// Resources, when set, replaces the container's resources.
	Resources *corev1.ResourceRequirements
}

// templateFuncs are the functions manifest templates may call. They bear the
// names and behave as the functions of Helm, so that the charts under
// config/charts render the same templates.
var templateFuncs = template.FuncMap{
	"b64enc": func(b any) string {
		switch v := b.(type) {
		case []byte:
			return base64.StdEncoding.EncodeToString(v)
		case string:
			return base64.StdEncoding.EncodeToString([]byte(v))
		}
		panic(fmt.Sprintf("b64enc: unsupported type %T", b))
	},
	"quote":  func(s string) string { return fmt.Sprintf("%q", s) },
	"join":   func(sep string, items []string) string { return strings.Join(items, sep) },
	"list":   func(items ...any) []any { return items },
	"toYaml": toYaml,
	"nindent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
}

// toYaml is Helm's toYaml: v as YAML without the final newline.
func toYaml(v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toYaml: %w", err)
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}
