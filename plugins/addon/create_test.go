package addon

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// configMap is a manifest of ConfigMap name.
func configMap(name string) cli.Manifest {
	return cli.Manifest{Object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "{{INSTALL_NAMESPACE}}"},
	}}}
}

func TestNewAddOnTemplate(t *testing.T) {
	kubeClient := func(role string) []addonv1alpha1.RegistrationSpec {
		kc := &addonv1alpha1.KubeClientRegistrationConfig{}
		if role != "" {
			kc.HubPermissions = []addonv1alpha1.HubPermissionConfig{{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster,
				CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}}
		}
		return []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: kc}}
	}
	tests := []struct {
		name         string
		registration bool
		role         string
		want         []addonv1alpha1.RegistrationSpec
	}{
		{"no hub credential", false, "", nil},
		{"hub registration", true, "", kubeClient("")},
		{"cluster role implies registration", false, "edit", kubeClient("edit")},
		{"both", true, "edit", kubeClient("edit")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := NewAddOnTemplate("hello", "0.0.1", []cli.Manifest{configMap("a"), configMap("b")}, tt.registration, tt.role, map[string]string{"tier": "edge"})
			if tmpl.Name != "hello-0.0.1" || tmpl.Spec.AddonName != "hello" || tmpl.Labels["tier"] != "edge" {
				t.Errorf("template %s of add-on %s, labels %v", tmpl.Name, tmpl.Spec.AddonName, tmpl.Labels)
			}
			if n := len(tmpl.Spec.AgentSpec.Workload.Manifests); n != 2 {
				t.Errorf("template has %d manifests, want 2", n)
			}
			if !reflect.DeepEqual(tmpl.Spec.Registration, tt.want) {
				t.Errorf("registration = %+v, want %+v", tmpl.Spec.Registration, tt.want)
			}
		})
	}
}

func TestNewClusterManagementAddOn(t *testing.T) {
	tests := []struct {
		name      string
		placement *addonv1alpha1.PlacementRef
		want      addonv1alpha1.InstallStrategy
	}{
		{"manual", nil, addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}},
		{"placement", &addonv1alpha1.PlacementRef{Namespace: "apps", Name: "all"}, addonv1alpha1.InstallStrategy{
			Type: addonv1alpha1.InstallStrategyPlacements,
			Placements: []addonv1alpha1.PlacementStrategy{{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "apps", Name: "all"},
				RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cma := NewClusterManagementAddOn("hello", "hello-0.0.1", tt.placement, nil)
			if !reflect.DeepEqual(cma.Spec.InstallStrategy, tt.want) {
				t.Errorf("install strategy = %+v, want %+v", cma.Spec.InstallStrategy, tt.want)
			}
			if got := defaultTemplate(cma); got != "hello-0.0.1" {
				t.Errorf("default template = %q", got)
			}
			if got := supportedConfigs(cma); got != "addontemplates/hello-0.0.1, addondeploymentconfigs" {
				t.Errorf("supported configs = %q", got)
			}
			if !addonv1alpha1.ManagedByAddonManager(cma.Annotations) || cma.Annotations[addonv1alpha1.AddonLifecycleAnnotationKey] == "" {
				t.Errorf("annotations %v do not name the add-on manager", cma.Annotations)
			}
		})
	}
}

func TestCreatePrecheck(t *testing.T) {
	template := func(name, addon string) *addonv1alpha1.AddOnTemplate {
		return &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: addon}}
	}
	existing := NewClusterManagementAddOn("hello", "hello-0.0.1", nil, nil)
	tests := []struct {
		name         string
		version      string
		overwrite    bool
		objs         []*addonv1alpha1.AddOnTemplate
		cma          bool
		wantExisting []string
		wantPrevious string
		wantErr      string
	}{
		{"new", "0.0.1", false, nil, false, nil, "", ""},
		{"exists", "0.0.2", false, nil, true, nil, "", "add-on hello exists already (ClusterManagementAddOn hello): add --overwrite"},
		{"overwrite with a new version", "0.0.2", true, []*addonv1alpha1.AddOnTemplate{template("hello-0.0.1", "hello")}, true, []string{"hello"}, "hello-0.0.1", ""},
		{"overwrite the same version", "0.0.1", true, []*addonv1alpha1.AddOnTemplate{template("hello-0.0.1", "hello")}, true, []string{"hello", "hello-0.0.1"}, "", ""},
		{"template left from another run", "0.0.1", false, []*addonv1alpha1.AddOnTemplate{template("hello-0.0.1", "hello")}, false, nil, "", "AddOnTemplate hello-0.0.1 exists already: add --overwrite"},
		{"template of another add-on", "0.0.1", true, []*addonv1alpha1.AddOnTemplate{template("hello-0.0.1", "hello-0")}, false, nil, "", "belongs to add-on hello-0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(apis.Scheme)
			for _, o := range tt.objs {
				b.WithObjects(o)
			}
			if tt.cma {
				b.WithObjects(existing.DeepCopy())
			}
			o := NewCreateOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Name, o.Version, o.Overwrite = "hello", tt.version, tt.overwrite
			tmpl := NewAddOnTemplate("hello", tt.version, nil, false, "", nil)
			got, previous, err := o.precheck(t.Context(), hub{Client: b.Build()}, tmpl, NewClusterManagementAddOn("hello", tmpl.Name, nil, nil))
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr != "" {
				return
			}
			var names []string
			for _, n := range []string{"hello", "hello-0.0.1", "hello-0.0.2"} {
				if got[n] {
					names = append(names, n)
				}
			}
			if !reflect.DeepEqual(names, tt.wantExisting) || previous != tt.wantPrevious {
				t.Errorf("existing %v, previous %q; want %v, %q", names, previous, tt.wantExisting, tt.wantPrevious)
			}
		})
	}
}

func TestCreateDryRunClient(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewCreateOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
	o.Name, o.Filenames, o.DryRun = "hello", []string{path}, cli.DryRunClient
	assert.ErrorContains(t, o.Run(t.Context()), "the manifests of add-on hello: "+path+" (document 2): ConfigMap a is also defined in "+path+" (document 1)")

	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		output string
		want   []string
	}{
		{"", []string{"AddOnTemplate hello-0.0.1 created (dry run)\nClusterManagementAddOn hello created (dry run)\n"}},
		{"name", []string{"addontemplate.addon.open-cluster-management.io/hello-0.0.1\nclustermanagementaddon.addon.open-cluster-management.io/hello\n"}},
		{"yaml", []string{"kind: AddOnTemplate", "\n---\n", "kind: ClusterManagementAddOn", "addonName: hello"}},
		{"json", []string{`"kind": "List"`, `"kind": "AddOnTemplate"`, `"kind": "ClusterManagementAddOn"`}},
	} {
		t.Run("output "+tt.output, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := NewCreateOptions(nil, streams)
			o.Name, o.Filenames, o.DryRun, o.PrintFlags.OutputFormat = "hello", []string{path}, cli.DryRunClient, ptr.To(tt.output)
			if err := o.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			expectContains(t, out, tt.want...)
		})
	}
}

func TestEnableDryRunClient(t *testing.T) {
	for _, tt := range []struct {
		output string
		want   []string
	}{
		{"", []string{
			"Deploying hello add-on to namespaces agents of managed cluster: cluster1 (dry run).\n" +
				"Deploying hello add-on to namespaces agents of managed cluster: cluster2 (dry run).\n",
		}},
		{"yaml", []string{"kind: ManagedClusterAddOn", "namespace: cluster2", "installNamespace: agents", "resource: addondeploymentconfigs", "owner: ops"}},
	} {
		t.Run("output "+tt.output, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := NewEnableOptions(nil, streams)
			o.Names, o.Clusters, o.InstallNamespace, o.DryRun = []string{"hello"}, []string{"cluster1", "cluster2"}, "agents", cli.DryRunClient
			o.Configs, o.Annotations, o.PrintFlags.OutputFormat = []addonv1alpha1.AddOnConfig{adc("cluster1", "proxy")}, map[string]string{"owner": "ops"}, ptr.To(tt.output)
			if err := o.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			expectContains(t, out, tt.want...)
		})
	}
}

// expectContains fails t unless out holds every want.
func expectContains(t *testing.T, out *bytes.Buffer, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

func TestValidateTemplateNamespaces(t *testing.T) {
	withNamespace := func(ns string) cli.Manifest {
		m := configMap("a")
		m.Object.SetNamespace(ns)
		m.Source = "agent.yaml (document 1)"
		return m
	}
	tests := []struct {
		name    string
		ns      string
		wantErr string
	}{
		{"namespace name", "open-cluster-management-agent-addon", ""},
		{"cluster-scoped", "", ""},
		{"variable", "{{INSTALL_NAMESPACE}}", `agent.yaml (document 1): ConfigMap {{INSTALL_NAMESPACE}}/a: metadata.namespace "{{INSTALL_NAMESPACE}}" is not a namespace name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantErr == "" {
				assert.NoError(t, ValidateTemplateNamespaces([]cli.Manifest{withNamespace(tt.ns)}))
			} else {
				assert.ErrorContains(t, ValidateTemplateNamespaces([]cli.Manifest{withNamespace(tt.ns)}), tt.wantErr)
			}
		})
	}
}
