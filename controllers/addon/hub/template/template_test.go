package template

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// configMap is a ConfigMap manifest whose data value uses a variable.
const configMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: "{{ADDON_NAME}}-{{CLUSTER_NAME}}"
  namespace: open-cluster-management-agent-addon
  labels: {"{{ADDON_NAME}}/cluster": "{{CLUSTER_NAME}}"}
data:
  namespace: "{{INSTALL_NAMESPACE}}"
  value: "{{VALUE}}"
  kubeconfig: "{{HUB_KUBECONFIG}}"
  gotemplate: "{{ .Values.x }} and {{LOG_LEVEL}}"
`

func TestVariables(t *testing.T) {
	vars := func(kv ...string) *addonv1alpha1.AddOnDeploymentConfig {
		spec := addonv1alpha1.AddOnDeploymentConfigSpec{}
		for i := 0; i < len(kv); i += 2 {
			spec.CustomizedVariables = append(spec.CustomizedVariables, addonv1alpha1.CustomizedVariable{Name: kv[i], Value: kv[i+1]})
		}
		return adc(spec)
	}
	cases := []struct {
		name        string
		registered  bool
		mcaNS       string
		configs     []*addonv1alpha1.AddOnDeploymentConfig
		wantName    string
		wantNS      string
		wantData    map[string]string
		wantLabel   string
		wantUnknown []string
	}{{
		name:     "built-ins without registration or configuration",
		wantName: "hello-cluster1", wantNS: addonv1alpha1.DefaultAddonInstallNamespace, wantLabel: "cluster1",
		wantData:    map[string]string{"namespace": addonv1alpha1.DefaultAddonInstallNamespace, "value": "", "kubeconfig": "", "gotemplate": "{{ .Values.x }} and "},
		wantUnknown: []string{"HUB_KUBECONFIG", "LOG_LEVEL", "VALUE"},
	}, {
		name:       "a registration defines HUB_KUBECONFIG; the MCA's install namespace",
		registered: true, mcaNS: "default",
		wantName: "hello-cluster1", wantNS: "default", wantLabel: "cluster1",
		wantData:    map[string]string{"namespace": "default", "value": "", "kubeconfig": HubKubeconfigPath, "gotemplate": "{{ .Values.x }} and "},
		wantUnknown: []string{"LOG_LEVEL", "VALUE"},
	}, {
		name:       "customized variables; a later config wins; built-ins cannot be overridden, HUB_KUBECONFIG can",
		registered: true, mcaNS: "default",
		configs: []*addonv1alpha1.AddOnDeploymentConfig{
			vars("VALUE", "first", "LOG_LEVEL", "4"),
			vars("VALUE", "second", "CLUSTER_NAME", "evil", "ADDON_NAME", "evil", "INSTALL_NAMESPACE", "evil", "HUB_KUBECONFIG", "/my/kubeconfig"),
		},
		wantName: "hello-cluster1", wantNS: "default", wantLabel: "cluster1",
		wantData: map[string]string{"namespace": "default", "value": "second", "kubeconfig": "/my/kubeconfig", "gotemplate": "{{ .Values.x }} and 4"},
	}, {
		name:     "agentInstallNamespace wins over the MCA's",
		mcaNS:    "default",
		configs:  []*addonv1alpha1.AddOnDeploymentConfig{adc(addonv1alpha1.AddOnDeploymentConfigSpec{AgentInstallNamespace: "agents"})},
		wantName: "hello-cluster1", wantNS: "agents", wantLabel: "cluster1",
		wantData:    map[string]string{"namespace": "agents", "value": "", "kubeconfig": "", "gotemplate": "{{ .Values.x }} and "},
		wantUnknown: []string{"HUB_KUBECONFIG", "LOG_LEVEL", "VALUE"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTemplate(t, configMap)
			if tc.registered {
				b = b.kubeClient()
			}
			in := b.input(tc.configs...)
			in.InstallNamespace = tc.mcaNS
			a := mustRender(t, in)
			if a.InstallNamespace != tc.wantNS {
				t.Errorf("InstallNamespace = %q, want %q", a.InstallNamespace, tc.wantNS)
			}
			cm := objects(t, a.Manifests)[0]
			if cm.GetName() != tc.wantName || cm.GetNamespace() != tc.wantNS {
				t.Errorf("ConfigMap %s/%s, want %s/%s", cm.GetNamespace(), cm.GetName(), tc.wantNS, tc.wantName)
			}
			if got := cm.GetLabels()["hello/cluster"]; got != tc.wantLabel {
				t.Errorf("label (key substituted) = %q, want %q; labels %v", got, tc.wantLabel, cm.GetLabels())
			}
			data := map[string]string{}
			for k, v := range cm.Object["data"].(map[string]any) {
				data[k] = v.(string)
			}
			if !reflect.DeepEqual(data, tc.wantData) {
				t.Errorf("data = %v, want %v", data, tc.wantData)
			}
			if !reflect.DeepEqual(a.UnknownVariables, tc.wantUnknown) {
				t.Errorf("UnknownVariables = %v, want %v", a.UnknownVariables, tc.wantUnknown)
			}
		})
	}
}

func TestBuiltinEnvAndHubCredential(t *testing.T) {
	cases := []struct {
		name        string
		b           func(templateBuilder) templateBuilder
		wantEnv     map[string]string
		wantVolumes map[string]string // volume name -> Secret
		wantMounts  map[string]string // volume name -> path
	}{{
		name:    "no registration: cluster and namespace only",
		b:       func(b templateBuilder) templateBuilder { return b },
		wantEnv: map[string]string{"CLUSTER_NAME": "cluster1", "INSTALL_NAMESPACE": addonv1alpha1.DefaultAddonInstallNamespace},
	}, {
		name: "KubeClient: hub kubeconfig mounted, HUB_KUBECONFIG set",
		b:    func(b templateBuilder) templateBuilder { return b.kubeClient().kubeClient() },
		wantEnv: map[string]string{"HUB_KUBECONFIG": HubKubeconfigPath, "CLUSTER_NAME": "cluster1",
			"INSTALL_NAMESPACE": addonv1alpha1.DefaultAddonInstallNamespace},
		wantVolumes: map[string]string{"hub-kubeconfig": "hello-hub-kubeconfig"},
		wantMounts:  map[string]string{"hub-kubeconfig": "/managed/hub-kubeconfig"},
	}, {
		name: "CustomSigner: its certificate mounted",
		b:    func(b templateBuilder) templateBuilder { return b.customSigner("example.com/signer.v1", nil) },
		wantEnv: map[string]string{"HUB_KUBECONFIG": HubKubeconfigPath, "CLUSTER_NAME": "cluster1",
			"INSTALL_NAMESPACE": addonv1alpha1.DefaultAddonInstallNamespace},
		wantVolumes: map[string]string{"cert-example-com-signer-v1": "hello-example.com-signer.v1-client-cert"},
		wantMounts:  map[string]string{"cert-example-com-signer-v1": "/managed/example.com-signer.v1"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustRender(t, tc.b(newTemplate(t, agentDeployment)).input())
			d := deployment(t, a.Manifests)
			if got := envOf(d); !reflect.DeepEqual(got, tc.wantEnv) {
				t.Errorf("env = %v, want %v", got, tc.wantEnv)
			}
			volumes := map[string]string{}
			for _, v := range d.Spec.Template.Spec.Volumes {
				volumes[v.Name] = v.Secret.SecretName
			}
			mounts := map[string]string{}
			for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
				mounts[m.Name] = m.MountPath
			}
			if len(volumes)+len(tc.wantVolumes) > 0 && !reflect.DeepEqual(volumes, tc.wantVolumes) {
				t.Errorf("volumes = %v, want %v", volumes, tc.wantVolumes)
			}
			if len(mounts)+len(tc.wantMounts) > 0 && !reflect.DeepEqual(mounts, tc.wantMounts) {
				t.Errorf("mounts = %v, want %v", mounts, tc.wantMounts)
			}
			args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
			if !strings.Contains(args, "--cluster=cluster1") || !strings.Contains(args, "--addon=hello") {
				t.Errorf("args = %q", args)
			}
		})
	}
}

func TestHooksAndManifestConfigs(t *testing.T) {
	hookJob := `{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "cleanup", "namespace": "ns",
		"labels": {"open-cluster-management.io/addon-pre-delete": ""}}, "spec": {"template": {"spec": {"containers": []}}}}`
	hookPod := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "goodbye", "namespace": "ns",
		"annotations": {"addon.open-cluster-management.io/addon-pre-delete": ""}}, "spec": {"containers": []}}`
	labeledCM := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "marked", "namespace": "ns",
		"labels": {"open-cluster-management.io/addon-pre-delete": ""}}}`
	orphan := `{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "keep", "namespace": "ns",
		"annotations": {"addon.open-cluster-management.io/deletion-orphan": ""}}}`
	deployID := workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: "hello-agent"}
	user := workv1.ManifestConfigOption{
		ResourceIdentifier: deployID,
		FeedbackRules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType},
			{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "replicas", Path: ".spec.replicas"}}}},
		UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
	}
	other := workv1.ManifestConfigOption{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "ns", Name: "marked"},
		UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}}

	a := mustRender(t, newTemplate(t, agentDeployment, hookJob, labeledCM, hookPod, orphan).configs(user, other).input())

	var deployed, hooks []string
	for _, o := range objects(t, a.Manifests) {
		deployed = append(deployed, o.GetKind()+"/"+o.GetName())
	}
	for _, o := range objects(t, a.HookManifests) {
		hooks = append(hooks, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"Deployment/hello-agent", "ConfigMap/marked", "ServiceAccount/keep"}; !reflect.DeepEqual(deployed, want) {
		t.Errorf("deployed %v, want %v", deployed, want)
	}
	if want := []string{"Job/cleanup", "Pod/goodbye"}; !reflect.DeepEqual(hooks, want) {
		t.Errorf("hooks %v, want %v", hooks, want)
	}
	wantHookConfigs := []workv1.ManifestConfigOption{
		wellKnownStatus(workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "ns", Name: "cleanup"}),
		wellKnownStatus(workv1.ResourceIdentifier{Resource: "pods", Namespace: "ns", Name: "goodbye"}),
	}
	if hw := a.HookWork(); hw == nil || !reflect.DeepEqual(hw.ManifestConfigs, wantHookConfigs) || len(hw.Workload.Manifests) != 2 {
		t.Errorf("HookWork = %s", toJSON(hw))
	}
	merged := user.DeepCopy()
	merged.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}, user.FeedbackRules[1]}
	merged.FeedbackScrapeType = workv1.FeedbackPollType
	if want := []workv1.ManifestConfigOption{*merged, other}; !reflect.DeepEqual(a.ManifestConfigs, want) {
		t.Errorf("ManifestConfigs = %s\nwant %s", toJSON(a.ManifestConfigs), toJSON(want))
	}
	wantDelete := &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "serviceaccounts", Namespace: "ns", Name: "keep"}}}}
	if !reflect.DeepEqual(a.DeleteOption, wantDelete) {
		t.Errorf("DeleteOption = %s", toJSON(a.DeleteOption))
	}
	if hw := mustRender(t, newTemplate(t, agentDeployment).input()).HookWork(); hw != nil {
		t.Errorf("HookWork without hooks = %s, want nil", toJSON(hw))
	}
}

func TestDeployWorks(t *testing.T) {
	cm := func(name string, size int) string {
		return `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "` + name + `", "namespace": "ns"}, "data": {"v": "` + strings.Repeat("x", size) + `"}}`
	}
	a := mustRender(t, newTemplate(t, cm("a", 100), cm("b", 100), cm("c", 150), cm("d", 10)).input())
	sizes := make([]int, len(a.Manifests))
	for i, m := range a.Manifests {
		sizes[i] = len(m.Raw)
	}
	cases := []struct {
		name    string
		limit   int
		want    [][]string
		wantErr error
	}{
		{name: "all fit in one work", limit: workv1.DefaultManifestsSizeLimit, want: [][]string{{"a", "b", "c", "d"}}},
		{name: "a new work when the next manifest would pass the limit", limit: sizes[0] + sizes[1] + 1, want: [][]string{{"a", "b"}, {"c", "d"}}},
		{name: "a work filled exactly to the limit", limit: sizes[0] + sizes[1], want: [][]string{{"a", "b"}, {"c", "d"}}},
		{name: "one manifest over the limit", limit: sizes[2] - 1, wantErr: ErrManifestTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := a.DeployWorks(tc.limit)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var got [][]string
			for _, s := range specs {
				var names []string
				total := 0
				for _, o := range objects(t, s.Workload.Manifests) {
					names = append(names, o.GetName())
				}
				for _, m := range s.Workload.Manifests {
					total += len(m.Raw)
				}
				if total > tc.limit {
					t.Errorf("work %v holds %d bytes, over %d", names, total, tc.limit)
				}
				got = append(got, names)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("works %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name      string
		manifests []string
		wantMsg   string
	}{
		{name: "not an object", manifests: []string{`["a"]`}, wantMsg: "not a JSON object"},
		{name: "no kind", manifests: []string{`{"apiVersion": "v1", "metadata": {"name": "a"}}`}, wantMsg: "kind is empty"},
		{name: "no apiVersion", manifests: []string{`{"kind": "ConfigMap", "metadata": {"name": "a"}}`}, wantMsg: "apiVersion is empty"},
		{name: "name empty once rendered", manifests: []string{`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "{{NAME}}"}}`},
			wantMsg: "empty metadata.name once rendered"},
		{name: "Deployment field of the wrong type", manifests: []string{`{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": {"name": "a"}, "spec": {"replicas": "three"}}`}, wantMsg: "manifests[0] (Deployment a)"},
		{name: "two manifests name one object once rendered", manifests: []string{
			`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a-{{CLUSTER_NAME}}"}}`,
			`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a-cluster1"}}`}, wantMsg: "manifests 0 and 1 are the same object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(newTemplate(t, tc.manifests...).input())
			assert.ErrorIs(t, err, ErrInvalidManifest)
			assert.ErrorContains(t, err, tc.wantMsg)
		})
	}
}

func TestNames(t *testing.T) {
	for got, want := range map[string]string{
		DeployWorkName("hello", 0):                    "addon-hello-deploy-0",
		DeployWorkName("hello", 12):                   "addon-hello-deploy-12",
		HostingDeployWorkName("hello", "cluster2", 0): "addon-hello-deploy-hosting-cluster2-0",
		PreDeleteHookWorkName("hello"):                "addon-hello-pre-delete",
		HubKubeconfigSecretName("hello"):              "hello-hub-kubeconfig",
		PermissionBindingName("hello", "ClusterRole"): "open-cluster-management:hello:clusterrole:agent",
		ProxyCAConfigMapName("hello"):                 "hello-proxy-ca",
		AgentName("hello"):                            "hello-agent",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestSelectDeployWorks(t *testing.T) {
	var works []*workv1.ManifestWork
	for _, name := range []string{"addon-hello-deploy-10", "addon-hello-pre-delete", "addon-hello-deploy-2", "addon-hello-deploy-x",
		"addon-hello-deploy-01", "addon-other-deploy-0", "addon-hello-deploy-0", "addon-hello-deploy--1"} {
		works = append(works, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	var got []string
	for _, w := range SelectDeployWorks("hello", works) {
		got = append(got, w.Name)
	}
	if want := []string{"addon-hello-deploy-0", "addon-hello-deploy-2", "addon-hello-deploy-10"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SelectDeployWorks = %v, want %v", got, want)
	}
}

// TestHostedPlacement places manifests by their hosted-manifest-location
// annotation in Hosted mode and ignores it in Default mode.
func TestHostedPlacement(t *testing.T) {
	at := func(name, loc string) string {
		ann := ""
		if loc != "" {
			ann = `, "annotations": {"` + addonv1alpha1.HostedManifestLocationAnnotationKey + `": "` + loc + `"}`
		}
		return `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "` + name + `", "namespace": "ns"` + ann + `}}`
	}
	hostedDeployment := strings.Replace(agentDeployment, "  name: hello-agent\n",
		"  name: hello-agent\n  annotations: {\""+addonv1alpha1.HostedManifestLocationAnnotationKey+"\": hosting}\n", 1)
	tpl := newTemplate(t, at("plain", ""), at("managed", "managed"), at("hosting", "hosting"), at("none", "none"), hostedDeployment)
	names := func(manifests []workv1.Manifest) []string {
		var out []string
		for _, o := range objects(t, manifests) {
			out = append(out, o.GetName())
		}
		return out
	}

	a := mustRender(t, tpl.input())
	assert.Equal(t, []string{"plain", "managed", "hosting", "none", "hello-agent"}, names(a.Manifests), "Default mode deploys every manifest on the managed cluster")
	assert.Empty(t, a.HostingManifests)
	if specs, err := a.HostingDeployWorks(workv1.DefaultManifestsSizeLimit); err != nil || len(specs) != 0 {
		t.Errorf("HostingDeployWorks in Default mode = %d specs, %v; want none", len(specs), err)
	}

	in := tpl.input()
	in.HostingCluster = "cluster1"
	a = mustRender(t, in)
	assert.Equal(t, []string{"plain", "managed"}, names(a.Manifests))
	grant := HostedCredentialRoleName("hello")
	assert.Equal(t, []string{"hosting", "hello-agent", grant, grant}, names(a.HostingManifests),
		"the hosting manifests, then the hosted agent's Role and RoleBinding")
	binding := objects(t, a.HostingManifests)[3]
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	assert.Equal(t, "RoleBinding", binding.GetKind())
	assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "namespace": "klusterlet-cluster1", "name": "klusterlet-agent"}}, subjects,
		"the grant binds the hosted agent of the add-on's cluster")
	assert.Equal(t, a.InstallNamespace, binding.GetNamespace())
	specs, err := a.HostingDeployWorks(workv1.DefaultManifestsSizeLimit)
	if err != nil || len(specs) != 1 {
		t.Fatalf("HostingDeployWorks = %d specs, %v; want 1", len(specs), err)
	}
	var probed bool
	for _, c := range specs[0].ManifestConfigs {
		probed = probed || (c.ResourceIdentifier.Resource == "deployments" && c.ResourceIdentifier.Name == "hello-agent")
	}
	assert.True(t, probed, "the hosting work asks for the status of the agent Deployment: %+v", specs[0].ManifestConfigs)
	for _, c := range a.ManifestConfigs {
		assert.NotEqual(t, "hello-agent", c.ResourceIdentifier.Name, "the managed works probe a Deployment they do not hold")
	}

	for name, manifest := range map[string]string{
		"an unknown location": at("x", "elsewhere"),
		"a hook on the hosting cluster": `{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "cleanup", "namespace": "ns",
			"labels": {"` + addonv1alpha1.AddonPreDeleteHookLabelKey + `": ""},
			"annotations": {"` + addonv1alpha1.HostedManifestLocationAnnotationKey + `": "hosting"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			in := newTemplate(t, manifest).input()
			in.HostingCluster = "cluster1"
			_, err := Render(in)
			assert.ErrorIs(t, err, ErrInvalidManifest)
			assert.ErrorContains(t, err, addonv1alpha1.HostedManifestLocationAnnotationKey)
		})
	}
}

func TestWorkAddon(t *testing.T) {
	for _, tc := range []struct {
		namespace     string
		labels        map[string]string
		cluster, name string
	}{
		{"cluster1", map[string]string{addonv1alpha1.AddonLabelKey: "hello"}, "cluster1", "hello"},
		{"cluster1", HostingWorkLabels("hello", "cluster2"), "cluster2", "hello"},
	} {
		if cluster, name := WorkAddon(tc.namespace, tc.labels); cluster != tc.cluster || name != tc.name {
			t.Errorf("WorkAddon(%s, %v) = %s/%s, want %s/%s", tc.namespace, tc.labels, cluster, name, tc.cluster, tc.name)
		}
	}
}
