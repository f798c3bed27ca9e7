package addonexample

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	// addonName is the example add-on's name.
	addonName = "helloworld"
	// agentDeployment is the name of the agent's Deployment.
	agentDeployment = "helloworld-agent"
	// hubKubeconfigPath is HUB_KUBECONFIG: where the add-on's hub credential
	// Secret is mounted.
	hubKubeconfigPath = "/managed/hub-kubeconfig/kubeconfig"
	// pollTimeout bounds every wait of the tests.
	pollTimeout = time.Minute
)

// example is the example add-on's manifests, as written.
type example struct {
	cma      *addonv1alpha1.ClusterManagementAddOn
	template *addonv1alpha1.AddOnTemplate
	hubRole  *rbacv1.ClusterRole
	objects  []*unstructured.Unstructured // every file's object, to apply
}

// loadExample reads the example's files, each strictly into its type.
func loadExample(t *testing.T) *example {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "addons", addonName)
	ex := &example{
		cma:      &addonv1alpha1.ClusterManagementAddOn{},
		template: &addonv1alpha1.AddOnTemplate{},
		hubRole:  &rbacv1.ClusterRole{},
	}
	for file, into := range map[string]any{
		"clustermanagementaddon.yaml": ex.cma,
		"addontemplate.yaml":          ex.template,
		"hub-clusterrole.yaml":        ex.hubRole,
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Fatalf("%s does not decode strictly: %v", file, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ex.objects = append(ex.objects, u)
	}
	return ex
}

// render returns the template's manifests as the hub's add-on manager
// renders them for cluster and the install namespace namespace: the built-in
// variables substituted, and the manifests moved to the install namespace
// (see placeIn).
func render(t *testing.T, tmpl *addonv1alpha1.AddOnTemplate, cluster, namespace string) []*unstructured.Unstructured {
	t.Helper()
	vars := map[string]string{
		"CLUSTER_NAME": cluster, "INSTALL_NAMESPACE": namespace,
		"HUB_KUBECONFIG": hubKubeconfigPath, "ADDON_NAME": tmpl.Spec.AddonName,
	}
	var objs []*unstructured.Unstructured
	for i, m := range tmpl.Spec.AgentSpec.Workload.Manifests {
		raw := m.Raw
		for name, value := range vars {
			quoted, _ := json.Marshal(value)
			raw = bytes.ReplaceAll(raw, []byte("{{"+name+"}}"), quoted[1:len(quoted)-1])
		}
		if bytes.Contains(raw, []byte("{{")) {
			t.Fatalf("manifest %d has a variable the add-on manager does not define: %s", i, raw)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			t.Fatalf("manifest %d: %v", i, err)
		}
		placeIn(t, u, namespace)
		objs = append(objs, u)
	}
	return objs
}

// placeIn moves a manifest written for the default install namespace to
// namespace, as OCM's add-on manager does: a namespaced manifest's namespace,
// a Namespace's name and a role binding's subjects' namespace.
func placeIn(t *testing.T, u *unstructured.Unstructured, namespace string) {
	t.Helper()
	if u.GetNamespace() != "" {
		u.SetNamespace(namespace)
	}
	switch u.GetKind() {
	case "Namespace":
		u.SetName(namespace)
	case "RoleBinding", "ClusterRoleBinding":
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			s.(map[string]any)["namespace"] = namespace
		}
		if err := unstructured.SetNestedSlice(u.Object, subjects, "subjects"); err != nil {
			t.Fatal(err)
		}
	}
}

// find returns the rendered object of kind and name, failing t if there is none.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the template renders no %s %s", kind, name)
	return nil
}

// deployment returns the rendered agent Deployment, typed.
func deployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", agentDeployment).Object, dep); err != nil {
		t.Fatal(err)
	}
	return dep
}
