package template

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// agentDeployment is a Deployment manifest using the built-in variables.
const agentDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello-agent
  namespace: open-cluster-management-agent-addon
spec:
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      containers:
      - name: agent
        image: quay.io/ocm/hello:v1
        args: ["--cluster={{CLUSTER_NAME}}", "--kubeconfig={{HUB_KUBECONFIG}}", "--addon={{ADDON_NAME}}"]
`

// templateBuilder builds AddOnTemplates.
type templateBuilder struct{ t *addonv1alpha1.AddOnTemplate }

// newTemplate returns a template named hello-template of add-on hello with
// the YAML manifests.
func newTemplate(t *testing.T, manifests ...string) templateBuilder {
	t.Helper()
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hello-template"}}
	tpl.Spec.AddonName = "hello"
	for _, m := range manifests {
		data, err := yaml.YAMLToJSON([]byte(strings.TrimSpace(m)))
		if err != nil {
			t.Fatalf("manifest %q: %v", m, err)
		}
		tpl.Spec.AgentSpec.Workload.Manifests = append(tpl.Spec.AgentSpec.Workload.Manifests,
			workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}})
	}
	return templateBuilder{tpl}
}

// kubeClient adds a KubeClient registration with hub permissions.
func (b templateBuilder) kubeClient(perms ...addonv1alpha1.HubPermissionConfig) templateBuilder {
	b.t.Spec.Registration = append(b.t.Spec.Registration, addonv1alpha1.RegistrationSpec{
		Type:       addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: perms},
	})
	return b
}

// customSigner adds a CustomSigner registration.
func (b templateBuilder) customSigner(signer string, subject *addonv1alpha1.Subject) templateBuilder {
	b.t.Spec.Registration = append(b.t.Spec.Registration, addonv1alpha1.RegistrationSpec{
		Type: addonv1alpha1.RegistrationTypeCustomSigner,
		CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{
			SignerName: signer, Subject: subject, SigningCA: addonv1alpha1.SigningCARef{Name: "ca"},
		},
	})
	return b
}

// configs adds manifest configs.
func (b templateBuilder) configs(c ...workv1.ManifestConfigOption) templateBuilder {
	b.t.Spec.AgentSpec.ManifestConfigs = append(b.t.Spec.AgentSpec.ManifestConfigs, c...)
	return b
}

// input returns the input for cluster1 with the deployment configs.
func (b templateBuilder) input(configs ...*addonv1alpha1.AddOnDeploymentConfig) Input {
	return Input{Cluster: "cluster1", AddonName: "hello", Template: b.t, DeploymentConfigs: configs}
}

// adc returns an AddOnDeploymentConfig with spec.
func adc(spec addonv1alpha1.AddOnDeploymentConfigSpec) *addonv1alpha1.AddOnDeploymentConfig {
	return &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"}, Spec: spec}
}

// mustRender renders in and fails t on an error.
func mustRender(t *testing.T, in Input) *Agent {
	t.Helper()
	a, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return a
}

// objects decodes manifests.
func objects(t *testing.T, manifests []workv1.Manifest) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, m := range manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			t.Fatalf("decode %s: %v", m.Raw, err)
		}
		out = append(out, obj)
	}
	return out
}

// deployment decodes the first Deployment of manifests.
func deployment(t *testing.T, manifests []workv1.Manifest) *appsv1.Deployment {
	t.Helper()
	for _, obj := range objects(t, manifests) {
		if obj.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no Deployment in %d manifests", len(manifests))
	return nil
}

// envOf returns the env of the first container of d as a map.
func envOf(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

// toJSON encodes v for messages.
func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// jsonRoundTrip decodes the JSON of in into out.
func jsonRoundTrip(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// splitYAML splits a multi-document YAML string.
func splitYAML(s string) []string {
	var out []string
	for _, doc := range strings.Split(s, "\n---\n") {
		if strings.TrimSpace(doc) != "" {
			out = append(out, doc)
		}
	}
	return out
}
