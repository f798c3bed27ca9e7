package template

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// daemonSet is a DaemonSet with two containers, and an env variable
// PROXY_ME that the proxy configuration must not remove.
const daemonSet = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: hello-ds, namespace: fixed}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      containers:
      - {name: agent, image: "quay.io/open-cluster-management/ds:v1", env: [{name: KEEP, value: "1"}, {name: CLUSTER_NAME, value: stale}]}
      - {name: sidecar, image: "docker.io/library/busybox:1"}
`

// namespaced objects, moved by agentInstallNamespace.
const namespaceObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: fixed}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: hello, namespace: fixed}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: hello}
subjects:
- {kind: ServiceAccount, name: hello, namespace: fixed}
- {kind: Group, name: people, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: hello}
`

func TestDeploymentConfig(t *testing.T) {
	quantity := resource.MustParse
	small := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("10m")}}
	big := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: quantity("1Gi")}}
	toleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}
	cases := []struct {
		name  string
		spec  addonv1alpha1.AddOnDeploymentConfigSpec
		check func(t *testing.T, pod corev1.PodSpec)
	}{{
		name: "nodePlacement sets node selector and tolerations",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{NodePlacement: &addonv1alpha1.NodePlacement{
			NodeSelector: map[string]string{"role": "infra"}, Tolerations: []corev1.Toleration{toleration}}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			if !reflect.DeepEqual(pod.NodeSelector, map[string]string{"role": "infra"}) || !reflect.DeepEqual(pod.Tolerations, []corev1.Toleration{toleration}) {
				t.Errorf("nodeSelector %v tolerations %v", pod.NodeSelector, pod.Tolerations)
			}
		},
	}, {
		name: "nodePlacement with tolerations only",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{NodePlacement: &addonv1alpha1.NodePlacement{Tolerations: []corev1.Toleration{toleration}}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			if pod.NodeSelector != nil || !reflect.DeepEqual(pod.Tolerations, []corev1.Toleration{toleration}) {
				t.Errorf("nodeSelector %v tolerations %v", pod.NodeSelector, pod.Tolerations)
			}
		},
	}, {
		name: "registries: a source prefix is replaced, the last matching mirror wins, others are left",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{Registries: []addonv1alpha1.ImageMirror{
			{Source: "quay.io/open-cluster-management", Mirror: "mirror.local/first"},
			{Source: "quay.io/open-cluster-management/", Mirror: "mirror.local/ocm/"},
			{Source: "gcr.io", Mirror: "mirror.local/gcr"},
		}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			if got := []string{pod.Containers[0].Image, pod.Containers[1].Image}; !reflect.DeepEqual(got,
				[]string{"mirror.local/ocm/ds:v1", "docker.io/library/busybox:1"}) {
				t.Errorf("images %v", got)
			}
		},
	}, {
		name: "registries: a mirror without source takes every image",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{Registries: []addonv1alpha1.ImageMirror{{Mirror: "mirror.local/all"}}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			if got := []string{pod.Containers[0].Image, pod.Containers[1].Image}; !reflect.DeepEqual(got,
				[]string{"mirror.local/all/ds:v1", "mirror.local/all/busybox:1"}) {
				t.Errorf("images %v", got)
			}
		},
	}, {
		name: "proxyConfig sets the proxy env in both cases, and the CA bundle",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{ProxyConfig: addonv1alpha1.ProxyConfig{
			HTTPProxy: "http://proxy:3128", HTTPSProxy: "https://proxy:3129", NoProxy: "10.0.0.0/8", CABundle: []byte("PEM")}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			env := map[string]string{}
			for _, e := range pod.Containers[1].Env {
				env[e.Name] = e.Value
			}
			want := map[string]string{"CLUSTER_NAME": "cluster1", "INSTALL_NAMESPACE": addonv1alpha1.DefaultAddonInstallNamespace,
				"HTTP_PROXY": "http://proxy:3128", "http_proxy": "http://proxy:3128", "HTTPS_PROXY": "https://proxy:3129",
				"https_proxy": "https://proxy:3129", "NO_PROXY": "10.0.0.0/8", "no_proxy": "10.0.0.0/8",
				"CA_BUNDLE_FILE_PATH": "/managed/proxy-ca/ca-bundle.crt"}
			if !reflect.DeepEqual(env, want) {
				t.Errorf("env %v\nwant %v", env, want)
			}
			if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "hello-proxy-ca" ||
				pod.Containers[0].VolumeMounts[0].MountPath != "/managed/proxy-ca" {
				t.Errorf("volumes %s mounts %s", toJSON(pod.Volumes), toJSON(pod.Containers[0].VolumeMounts))
			}
		},
	}, {
		name: "resourceRequirements: exact and wildcard ids, a later entry wins",
		spec: addonv1alpha1.AddOnDeploymentConfigSpec{ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{
			{ContainerID: "*:*:*", Resources: small},
			{ContainerID: "daemonsets:hello-*:agent", Resources: big},
			{ContainerID: "deployments:hello-ds:sidecar", Resources: big},
		}},
		check: func(t *testing.T, pod corev1.PodSpec) {
			if !reflect.DeepEqual(pod.Containers[0].Resources, big) || !reflect.DeepEqual(pod.Containers[1].Resources, small) {
				t.Errorf("resources %s", toJSON([]any{pod.Containers[0].Resources, pod.Containers[1].Resources}))
			}
		},
	}, {
		name: "the image pull Secret of the add-on namespace, as OCM's add-on framework sets it",
		check: func(t *testing.T, pod corev1.PodSpec) {
			if want := []corev1.LocalObjectReference{{Name: pullsecret.Name}}; !reflect.DeepEqual(pod.ImagePullSecrets, want) {
				t.Errorf("imagePullSecrets %v, want %v", pod.ImagePullSecrets, want)
			}
		},
	}, {
		name: "built-in env replaces a stale value and keeps the others",
		check: func(t *testing.T, pod corev1.PodSpec) {
			want := []corev1.EnvVar{{Name: "KEEP", Value: "1"}, {Name: "CLUSTER_NAME", Value: "cluster1"},
				{Name: "INSTALL_NAMESPACE", Value: addonv1alpha1.DefaultAddonInstallNamespace}}
			if !reflect.DeepEqual(pod.Containers[0].Env, want) {
				t.Errorf("env %s", toJSON(pod.Containers[0].Env))
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustRender(t, newTemplate(t, daemonSet).input(adc(tc.spec)))
			ds := objects(t, a.Manifests)[0]
			if _, ok := ds.Object["status"]; ok {
				t.Errorf("rendered DaemonSet has a status: %s", toJSON(ds.Object))
			}
			spec := &struct {
				Spec struct {
					Template struct{ Spec corev1.PodSpec } `json:"template"`
				} `json:"spec"`
			}{}
			if err := jsonRoundTrip(ds.Object, spec); err != nil {
				t.Fatal(err)
			}
			tc.check(t, spec.Spec.Template.Spec)
		})
	}
}

func TestAgentInstallNamespace(t *testing.T) {
	proxy := addonv1alpha1.ProxyConfig{CABundle: []byte("PEM")}
	cases := []struct {
		name     string
		mcaNS    string
		extra    string // more manifests
		configs  []*addonv1alpha1.AddOnDeploymentConfig
		wantNS   string
		wantObjs []string // kind/namespace/name in order
		wantSA   string
	}{{
		name:     "without agentInstallNamespace the manifests keep their namespaces",
		wantNS:   addonv1alpha1.DefaultAddonInstallNamespace,
		wantObjs: []string{"DaemonSet/fixed/hello-ds", "Namespace//fixed", "RoleBinding/fixed/hello", "ClusterRole//hello"},
		wantSA:   "fixed",
	}, {
		name:  "the MCA's install namespace takes what is in the default install namespace",
		mcaNS: "default",
		extra: "\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: open-cluster-management-agent-addon}\n---\n" +
			"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: agent, namespace: open-cluster-management-agent-addon}",
		wantNS: "default",
		wantObjs: []string{"DaemonSet/fixed/hello-ds", "Namespace//fixed", "RoleBinding/fixed/hello", "ClusterRole//hello",
			"Namespace//default", "ServiceAccount/default/agent"},
		wantSA: "fixed",
	}, {
		name:     "agentInstallNamespace moves namespaced objects, renames the Namespace, follows ServiceAccount subjects",
		configs:  []*addonv1alpha1.AddOnDeploymentConfig{adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "agents"})},
		wantNS:   "agents",
		wantObjs: []string{"DaemonSet/agents/hello-ds", "Namespace//agents", "RoleBinding/agents/hello", "ClusterRole//hello"},
		wantSA:   "agents",
	}, {
		name: "the later config's namespace wins; the proxy CA ConfigMap goes to it",
		configs: []*addonv1alpha1.AddOnDeploymentConfig{
			adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "first"}),
			adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "agents", ProxyConfig: proxy}),
		},
		wantNS: "agents",
		wantObjs: []string{"DaemonSet/agents/hello-ds", "Namespace//agents", "RoleBinding/agents/hello", "ClusterRole//hello",
			"ConfigMap/agents/hello-proxy-ca"},
		wantSA: "agents",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTemplate(t, daemonSet)
			for _, doc := range splitYAML(namespaceObjects + tc.extra) {
				b.t.Spec.AgentSpec.Workload.Manifests = append(b.t.Spec.AgentSpec.Workload.Manifests, newTemplate(t, doc).t.Spec.AgentSpec.Workload.Manifests...)
			}
			in := b.input(tc.configs...)
			in.InstallNamespace = tc.mcaNS
			a := mustRender(t, in)
			if a.InstallNamespace != tc.wantNS {
				t.Errorf("InstallNamespace %q, want %q", a.InstallNamespace, tc.wantNS)
			}
			var got []string
			for _, o := range objects(t, a.Manifests) {
				got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
				if o.GetKind() == "RoleBinding" {
					subjects := o.Object["subjects"].([]any)
					if ns := subjects[0].(map[string]any)["namespace"]; ns != tc.wantSA {
						t.Errorf("ServiceAccount subject namespace %v, want %s", ns, tc.wantSA)
					}
					if _, ok := subjects[1].(map[string]any)["namespace"]; ok {
						t.Errorf("Group subject got a namespace: %v", subjects[1])
					}
				}
			}
			if !reflect.DeepEqual(got, tc.wantObjs) {
				t.Errorf("objects %v\nwant %v", got, tc.wantObjs)
			}
		})
	}
}

func TestWildcard(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"abc", "abc", true}, {"abc", "abd", false},
		{"a*", "abc", true}, {"*c", "abc", true}, {"a*c", "abbbc", true}, {"a*c", "abd", false},
		{"a*b*c", "aXbYc", true}, {"a*b*c", "acb", false}, {"hello-*", "hello-ds", true}, {"hello-*", "other", false},
	}
	for _, tc := range cases {
		if got := wildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
