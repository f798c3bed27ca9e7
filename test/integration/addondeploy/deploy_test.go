package addondeploy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// helloManifests is the agent of the template add-on hello, written for
// the default install namespace (the CRD of AddOnTemplate refuses a
// variable in metadata.namespace).
const helloManifests = `apiVersion: v1
kind: Namespace
metadata: {name: open-cluster-management-agent-addon}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello-agent, namespace: open-cluster-management-agent-addon}
spec:
  replicas: 1
  selector: {matchLabels: {app: hello-agent}}
  template:
    metadata: {labels: {app: hello-agent}}
    spec:
      containers:
      - name: agent
        image: quay.io/open-cluster-management/hello:v1
        args: ["--cluster={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}", "--v={{LOG_LEVEL}}"]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hello-config, namespace: open-cluster-management-agent-addon}
data: {cluster: "{{CLUSTER_NAME}}", addon: "{{ADDON_NAME}}", level: "{{LOG_LEVEL}}", namespace: "{{INSTALL_NAMESPACE}}"}`

// The configurations of hello.
var (
	helloTemplate = configRef{addonv1alpha1.AddOnTemplateResource, "", "hello-template"}
	helloConfig   = configRef{addonv1alpha1.AddOnDeploymentConfigResource, "default", "hello-config"}
)

// TestTemplateAddons runs template add-ons through their life on one hub
// and one managed cluster.
func TestTemplateAddons(t *testing.T) {
	s := setup(t)
	// Each step builds on the state the previous ones left.
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"template with a deployment config is rendered and applied", s.testDeploy},
		{"a configuration change waits for its desired hash", s.testRollout},
		{"bad input is reported and changes nothing", s.testBadInput},
		{"the cluster's image-registries annotation mirrors the images", s.testClusterRegistries},
		{"large templates are split over works", s.testSplit},
		{"health follows the Deployment and the cluster", s.testHealth},
		{"pre-delete hook runs before the add-on goes", s.testPreDeleteHook},
		{"seed 003: install namespace default", s.testSeedDefaultNamespace},
		{"Pods that violate restricted are named on the add-on", s.testPodSecurity},
		{"a hosted add-on's agent goes to its hosting cluster", s.testHosted},
		{"a hosted add-on's hosting cluster is discovered from its cluster's report", s.testDiscovery},
		{"deleting an add-on removes its works and hub permissions", s.testDelete},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// createHello creates the ClusterManagementAddOn, AddOnTemplate,
// AddOnDeploymentConfig and hub roles of hello, and its add-on on cluster1.
func (s *suite) createHello(t *testing.T) {
	t.Helper()
	s.create(t, s.hubC, newCMA("hello"))
	s.create(t, s.hubC, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "hello-hub-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}})
	s.create(t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hello-shared"}})
	s.create(t, s.hubC, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "hello-shared", Name: "hello-writer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}}})
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: helloTemplate.name}}
	tpl.Spec.AddonName = "hello"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, helloManifests)
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{
			{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster,
				CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: "hello-hub-reader"}},
			{Type: addonv1alpha1.HubPermissionsBindingSingleNamespace, SingleNamespace: &addonv1alpha1.SingleNamespaceBindingConfig{
				Namespace: "hello-shared", RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "hello-writer"}}},
		}}}}
	s.create(t, s.hubC, tpl)
	s.create(t, s.hubC, &addonv1alpha1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: helloConfig.namespace, Name: helloConfig.name},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "4"}},
			NodePlacement: &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"},
				Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}},
			Registries:            []addonv1alpha1.ImageMirror{{Source: "quay.io/open-cluster-management", Mirror: "mirror.local/ocm"}},
			ProxyConfig:           addonv1alpha1.ProxyConfig{HTTPProxy: "http://proxy.local:3128"},
			AgentInstallNamespace: "hello-agents",
			ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{{ContainerID: "deployments:hello-agent:agent",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
		},
	})
	s.create(t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "hello"}})
}

// helloDeployment waits for the Deployment of hello on cluster1 to match ok.
func (s *suite) helloDeployment(t *testing.T, what string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	s.poll(t, what, func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: "hello-agents", Name: "hello-agent"}, d)
		return err == nil && ok(d), err
	})
	return d
}

func (s *suite) testDeploy(t *testing.T) {
	s.createHello(t)
	s.setDesired(t, "hello", nil, helloTemplate, helloConfig)

	d := s.helloDeployment(t, "the hello agent Deployment on cluster1", func(*appsv1.Deployment) bool { return true })
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	checks := map[string]bool{
		"args substituted":       reflect.DeepEqual(c.Args, []string{"--cluster=cluster1", "--hub-kubeconfig=/managed/hub-kubeconfig/kubeconfig", "--v=4"}),
		"image mirrored":         c.Image == "mirror.local/ocm/hello:v1",
		"node selector":          reflect.DeepEqual(pod.NodeSelector, map[string]string{"role": "infra"}),
		"tolerations":            len(pod.Tolerations) == 1 && pod.Tolerations[0].Key == "dedicated",
		"resource requirements":  c.Resources.Requests.Cpu().String() == "10m",
		"built-in env":           env["CLUSTER_NAME"] == "cluster1" && env["INSTALL_NAMESPACE"] == "hello-agents" && env["HUB_KUBECONFIG"] != "",
		"proxy env":              env["HTTP_PROXY"] == "http://proxy.local:3128" && env["http_proxy"] == "http://proxy.local:3128",
		"hub kubeconfig mounted": len(pod.Volumes) == 1 && pod.Volumes[0].Secret != nil && pod.Volumes[0].Secret.SecretName == "hello-hub-kubeconfig",
		"image pull Secret":      reflect.DeepEqual(pod.ImagePullSecrets, []corev1.LocalObjectReference{{Name: pullsecret.Name}}),
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("%s: pod template %+v", what, pod)
		}
	}
	cm := &corev1.ConfigMap{}
	kit.Must(t, "get the ConfigMap", s.spokeC.Get(s.ctx, client.ObjectKey{Namespace: "hello-agents", Name: "hello-config"}, cm))
	if want := map[string]string{"cluster": "cluster1", "addon": "hello", "level": "4", "namespace": "hello-agents"}; !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("ConfigMap data %v, want %v", cm.Data, want)
	}

	mca := s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
	w, err := s.work(s.ctx, "addon-hello-deploy-0")
	kit.Must(t, "get the deploy work", err)
	owner := metav1.GetControllerOf(w)
	switch {
	case w.Labels[addonv1alpha1.AddonLabelKey] != "hello" || w.Labels[addonv1alpha1.AddonTemplateLabelKey] != "hello-template":
		t.Errorf("work labels %v", w.Labels)
	case owner == nil || owner.UID != mca.UID:
		t.Errorf("work owners %v, want the add-on %s", w.OwnerReferences, mca.UID)
	case w.Annotations[workv1.ConfigSpecHashAnnotationKey] != addonconfig.Desired(mca).Annotation():
		t.Errorf("config-spec-hash %q, want %q", w.Annotations[workv1.ConfigSpecHashAnnotationKey], addonconfig.Desired(mca).Annotation())
	}
	st := mca.Status
	wantUser := "system:open-cluster-management:cluster:cluster1:addon:hello:agent:hello-agent"
	if st.Namespace != "hello-agents" || st.HealthCheck.Mode != addonv1alpha1.HealthCheckModeCustomized ||
		len(st.Registrations) != 1 || st.Registrations[0].SignerName != addonv1alpha1.KubeAPIServerClientSignerName ||
		st.Registrations[0].Subject.User != wantUser || len(st.RelatedObjects) != 2 {
		t.Errorf("status %+v", st)
	}
	if slices.Contains(mca.Finalizers, addonv1alpha1.AddonPreDeleteHookFinalizer) {
		t.Errorf("finalizers %v: the template has no pre-delete hook", mca.Finalizers)
	}
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionTrue, addonv1alpha1.RegistrationAppliedReasonSetPermissionApplied)
	s.checkBindings(t, mca)
}

// checkBindings checks the RoleBindings of hello's hub permissions.
func (s *suite) checkBindings(t *testing.T, mca *addonv1alpha1.ManagedClusterAddOn) {
	t.Helper()
	group := "system:open-cluster-management:cluster:cluster1:addon:hello"
	for _, want := range []struct {
		namespace, name, roleKind, role string
		owned                           bool
	}{
		{clusterName, "open-cluster-management:hello:clusterrole:agent", "ClusterRole", "hello-hub-reader", true},
		{"hello-shared", "open-cluster-management:hello:role:agent", "Role", "hello-writer", false},
	} {
		rb := &rbacv1.RoleBinding{}
		kit.Must(t, "get RoleBinding "+want.name, s.hubC.Get(s.ctx, client.ObjectKey{Namespace: want.namespace, Name: want.name}, rb))
		owned := len(rb.OwnerReferences) == 1 && rb.OwnerReferences[0].UID == mca.UID
		// The add-on's certificate group and its token driver's ServiceAccount.
		if rb.RoleRef.Kind != want.roleKind || rb.RoleRef.Name != want.role || len(rb.Subjects) != 2 ||
			rb.Subjects[0].Kind != rbacv1.GroupKind || rb.Subjects[0].Name != group ||
			rb.Subjects[1].Kind != rbacv1.ServiceAccountKind || rb.Subjects[1].Namespace != clusterName || rb.Subjects[1].Name != "hello-agent" ||
			owned != want.owned {
			t.Errorf("RoleBinding %s/%s: roleRef %v subjects %v owners %v", want.namespace, want.name, rb.RoleRef, rb.Subjects, rb.OwnerReferences)
		}
	}
}

func (s *suite) testRollout(t *testing.T) {
	before, err := s.work(s.ctx, "addon-hello-deploy-0")
	kit.Must(t, "get the deploy work", err)
	oldHash := s.specHash(t, helloConfig)
	adc := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: helloConfig.namespace, Name: helloConfig.name}}
	s.update(t, s.hubC, adc, false, func() { adc.Spec.CustomizedVariables[0].Value = "6" })

	// The configuration controller has not moved the desired hash: nothing changes.
	s.stays(t, 3*time.Second, "the deploy work as it was", func(ctx context.Context) (bool, error) {
		w, err := s.work(ctx, before.Name)
		return err == nil && w.Generation == before.Generation &&
			reflect.DeepEqual(w.Annotations, before.Annotations), err
	})
	s.setDesired(t, "hello", map[string]string{helloConfig.name: oldHash}, helloTemplate, helloConfig)
	s.stays(t, time.Second, "the deploy work as it was", func(ctx context.Context) (bool, error) {
		w, err := s.work(ctx, before.Name)
		return err == nil && w.Generation == before.Generation, err
	})

	// The desired hash catches up: the work and the agent follow.
	s.setDesired(t, "hello", nil, helloTemplate, helloConfig)
	s.helloDeployment(t, "the hello agent at log level 6", func(d *appsv1.Deployment) bool {
		return slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--v=6")
	})
	mca, err := s.mca(s.ctx, "hello")
	kit.Must(t, "get the add-on", err)
	w, err := s.work(s.ctx, before.Name)
	kit.Must(t, "get the deploy work", err)
	if got, want := w.Annotations[workv1.ConfigSpecHashAnnotationKey], addonconfig.Desired(mca).Annotation(); got != want ||
		!strings.Contains(got, s.specHash(t, helloConfig)) {
		t.Errorf("config-spec-hash %s, want %s", got, want)
	}
}

func (s *suite) testBadInput(t *testing.T) {
	before, err := s.work(s.ctx, "addon-hello-deploy-0")
	kit.Must(t, "get the deploy work", err)
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: helloTemplate.name}}
	var good []workv1.Manifest
	s.update(t, s.hubC, tpl, false, func() {
		good = tpl.Spec.AgentSpec.Workload.Manifests
		bad := manifests(t, `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "broken"}, "spec": {"replicas": "three"}}`)
		tpl.Spec.AgentSpec.Workload.Manifests = append(slices.Clone(good), bad...)
	})
	s.setDesired(t, "hello", nil, helloTemplate, helloConfig)
	mca := s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionFalse, addonv1alpha1.ManifestAppliedReasonRenderFailed)
	msg := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied).Message
	if !strings.Contains(msg, "invalid manifest") || !strings.Contains(msg, "manifests[3] (Deployment broken)") {
		t.Errorf("ManifestApplied message %q does not name the manifest", msg)
	}
	s.poll(t, "a RenderFailed Event on the add-on", func(ctx context.Context) (bool, error) {
		return s.hasEvent(ctx, "hello", "RenderFailed")
	})
	w, err := s.work(s.ctx, before.Name)
	kit.Must(t, "get the deploy work", err)
	if w.Generation != before.Generation {
		t.Errorf("the deploy work changed (generation %d to %d) for a template that cannot be rendered", before.Generation, w.Generation)
	}

	s.update(t, s.hubC, tpl, false, func() { tpl.Spec.AgentSpec.Workload.Manifests = good })
	s.setDesired(t, "hello", nil, helloTemplate, helloConfig)
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
}

// hasEvent reports whether an Event with reason regards add-on name.
func (s *suite) hasEvent(ctx context.Context, name, reason string) (bool, error) {
	list := &corev1.EventList{}
	if err := s.hubC.List(ctx, list, client.InNamespace(clusterName)); err != nil {
		return false, err
	}
	return slices.ContainsFunc(list.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "ManagedClusterAddOn" && e.Reason == reason
	}), nil
}

func (s *suite) testSplit(t *testing.T) {
	cm := func(i int) string {
		return fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big-%d", "namespace": "default"}, "data": {"v": %q}}`,
			i, strings.Repeat("x", 3000))
	}
	s.create(t, s.hubC, newCMA("big"))
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "big-template"}}
	tpl.Spec.AddonName = "big"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, cm(0)+"\n---\n"+cm(1)+"\n---\n"+cm(2))
	s.create(t, s.hubC, tpl)
	s.create(t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "big"}})
	ref := configRef{addonv1alpha1.AddOnTemplateResource, "", "big-template"}
	s.setDesired(t, "big", nil, ref)

	s.poll(t, "two deploy works holding the three ConfigMaps, applied", func(ctx context.Context) (bool, error) {
		var names []string
		for i := range 2 {
			w, err := s.work(ctx, fmt.Sprintf("addon-big-deploy-%d", i))
			if err != nil || !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) {
				return false, err
			}
			names = append(names, manifestNames(t, w)...)
		}
		return reflect.DeepEqual(names, []string{"big-0", "big-1", "big-2"}), nil
	})
	s.waitCondition(t, "big", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)

	s.update(t, s.hubC, tpl, false, func() { tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, cm(0)) })
	s.setDesired(t, "big", nil, ref)
	s.poll(t, "the surplus deploy work and its ConfigMaps gone", func(ctx context.Context) (bool, error) {
		_, err := s.work(ctx, "addon-big-deploy-1")
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		err = s.spokeC.Get(ctx, client.ObjectKey{Namespace: "default", Name: "big-2"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// manifestNames returns the names of the manifests of w.
func manifestNames(t *testing.T, w *workv1.ManifestWork) []string {
	t.Helper()
	var names []string
	for _, m := range w.Spec.Workload.Manifests {
		var obj metav1.PartialObjectMetadata
		kit.Must(t, "decode manifest", json.Unmarshal(m.Raw, &obj))
		names = append(names, obj.Name)
	}
	return names
}
