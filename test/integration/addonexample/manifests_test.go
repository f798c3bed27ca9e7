package addonexample

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// TestManifests checks that the example's files fit together: the
// ClusterManagementAddOn defaults to the AddOnTemplate, the template's hub
// permission is the shipped ClusterRole, and the rendered Deployment runs the
// helloworld-addon image with the hub credential mounted, labeled so that the
// component runner runs it.
func TestManifests(t *testing.T) {
	ex := loadExample(t)

	assert.Equal(t, addonName, ex.cma.Name)
	assert.Equal(t, addonName, ex.template.Spec.AddonName)
	assert.True(t, strings.HasPrefix(ex.template.Name, addonName+"-"), "template %s is not named helloworld-<version>", ex.template.Name)
	configs := map[string]*addonv1alpha1.ConfigMeta{}
	for i := range ex.cma.Spec.SupportedConfigs {
		c := &ex.cma.Spec.SupportedConfigs[i]
		configs[c.Resource] = c
	}
	require.Contains(t, configs, "addontemplates")
	require.NotNil(t, configs["addontemplates"].DefaultConfig)
	assert.Equal(t, ex.template.Name, configs["addontemplates"].DefaultConfig.Name)
	assert.Contains(t, configs, "addondeploymentconfigs")

	require.Len(t, ex.template.Spec.Registration, 1)
	reg := ex.template.Spec.Registration[0]
	assert.Equal(t, addonv1alpha1.RegistrationTypeKubeClient, reg.Type)
	require.NotNil(t, reg.KubeClient)
	require.Len(t, reg.KubeClient.HubPermissions, 1)
	perm := reg.KubeClient.HubPermissions[0]
	assert.Equal(t, addonv1alpha1.HubPermissionsBindingCurrentCluster, perm.Type)
	require.NotNil(t, perm.CurrentCluster)
	assert.Equal(t, ex.hubRole.Name, perm.CurrentCluster.ClusterRoleName)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
		ex.hubRole.Rules, "the agent reads ConfigMaps on the hub, nothing more")

	for _, m := range ex.template.Spec.AgentSpec.Workload.Manifests {
		if ns := manifestNamespace(t, m.Raw); ns != "" {
			assert.Equal(t, addonv1alpha1.DefaultAddonInstallNamespace, ns, "manifests are written for the default install namespace: %s", m.Raw)
		}
	}
	objs := render(t, ex.template, "cluster1", "addon-ns")
	for _, o := range objs {
		if o.GetKind() != "Namespace" && o.GetKind() != "ClusterRole" {
			assert.Equal(t, "addon-ns", o.GetNamespace(), "%s %s is not in the install namespace", o.GetKind(), o.GetName())
		}
	}
	dep := deployment(t, objs)
	selector, err := labels.Parse(runner.DefaultSelector)
	require.NoError(t, err)
	assert.True(t, selector.Matches(labels.Set(dep.Labels)), "the component runner does not select the agent Deployment (labels %v)", dep.Labels)
	pod := dep.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	agent := pod.Containers[0]
	assert.Equal(t, "helloworld-addon", strings.SplitN(path.Base(agent.Image), ":", 2)[0], "image %s does not name the binary make build builds", agent.Image)
	assert.Equal(t, []string{"--cluster-name=cluster1", "--namespace=addon-ns", "--hub-kubeconfig=" + hubKubeconfigPath}, agent.Args)
	mount := slices.IndexFunc(agent.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path.Dir(hubKubeconfigPath) })
	require.GreaterOrEqual(t, mount, 0, "the hub credential is not mounted at %s", path.Dir(hubKubeconfigPath))
	volume := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == agent.VolumeMounts[mount].Name })
	require.GreaterOrEqual(t, volume, 0)
	require.NotNil(t, pod.Volumes[volume].Secret)
	assert.Equal(t, addonName+"-hub-kubeconfig", pod.Volumes[volume].Secret.SecretName)
	assert.Equal(t, find(t, objs, "ServiceAccount", pod.ServiceAccountName).GetName(), pod.ServiceAccountName)
}

// manifestNamespace returns the metadata.namespace of a raw manifest.
func manifestNamespace(t *testing.T, raw []byte) string {
	t.Helper()
	var m struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	return m.Metadata.Namespace
}
