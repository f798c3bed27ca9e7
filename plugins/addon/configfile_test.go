package addon

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// adc returns a reference to AddOnDeploymentConfig namespace/name.
func adc(namespace, name string) addonv1alpha1.AddOnConfig {
	return addonv1alpha1.AddOnConfig{
		ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource},
		ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: namespace, Name: name},
	}
}

func TestReadConfigFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []addonv1alpha1.AddOnConfig
		wantErr string
	}{
		{"two configs", `configs:
- group: addon.open-cluster-management.io
  resource: addondeploymentconfigs
  namespace: cluster1
  name: proxy
- {group: addon.open-cluster-management.io, resource: addondeploymentconfigs, namespace: cluster1, name: nodes}
`, []addonv1alpha1.AddOnConfig{adc("cluster1", "proxy"), adc("cluster1", "nodes")}, ""},
		{"cluster-scoped, core group", "configs:\n- {resource: configmaps, name: x}\n",
			[]addonv1alpha1.AddOnConfig{{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "configmaps"}, ConfigReferent: addonv1alpha1.ConfigReferent{Name: "x"}}}, ""},
		{"misspelled key", "configs:\n- {resource: addondeploymentconfigs, namespaces: x}\n", nil, `unknown field "namespaces"`},
		{"not YAML", "configs: [", nil, "write a list of configs"},
		{"empty", "configs: []\n", nil, "no configs listed"},
		{"no resource", "configs:\n- {name: x}\n", nil, "configs[0]: resource is required"},
		{"no name", "configs:\n- {resource: addondeploymentconfigs}\n", nil, "name is required"},
		{"invalid namespace", "configs:\n- {resource: r, namespace: Ns, name: x}\n", nil, `namespace "Ns" is invalid`},
		{"twice", "configs:\n- {resource: r, name: x}\n- {resource: r, name: x}\n", nil, "configs[1] (r x): the same configuration as configs[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "configs.yaml")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadConfigFile(path)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadConfigFile = %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := ReadConfigFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("ReadConfigFile of a missing file succeeded")
	}
}
