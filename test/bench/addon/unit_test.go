package addon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// The unit tests cover the benchmark's own predicates; they start no control
// planes and run under plain `go test` and -short.

func TestRolledOut(t *testing.T) {
	ref := func(resource, name, desired, applied string) addonv1alpha1.ConfigReference {
		r := addonv1alpha1.ConfigReference{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: resource}}
		referent := addonv1alpha1.ConfigReferent{Namespace: configNamespace, Name: name}
		if desired != "" {
			r.DesiredConfig = &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: desired}
		}
		if applied != "" {
			r.LastAppliedConfig = &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: applied}
		}
		return r
	}
	template := ref(addonv1alpha1.AddOnTemplateResource, "helloworld-0.1.0", "t1", "t1")
	tests := []struct {
		name   string
		reason string
		refs   []addonv1alpha1.ConfigReference
		want   bool
	}{
		{name: "completed at the new hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "new")}, want: true},
		{name: "completed at the old hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "old", "old")}},
		{name: "desired but not applied yet", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "old")}},
		{name: "still progressing", reason: addonv1alpha1.ProgressingReasonProgressing,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "new")}},
		{name: "another config at the hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, "other", "new", "new")}},
		{name: "no deployment config yet", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			mca.Status.ConfigReferences = tt.refs
			status := metav1.ConditionFalse
			if tt.reason == addonv1alpha1.ProgressingReasonProgressing {
				status = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
				Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: status, Reason: tt.reason})
			if got := rolledOut(mca, "new"); got != tt.want {
				t.Errorf("rolledOut = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExampleCopy(t *testing.T) {
	root, err := framework.RepoRoot()
	require.NoError(t, err)
	var example []string
	for _, file := range []string{"addontemplate.yaml", "clustermanagementaddon.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", "addons", addonName, file))
		require.NoError(t, err)
		example = append(example, string(data))
	}
	objs, err := exampleCopy(strings.Join(example, "\n---\n"), "helloworld-7")
	require.NoError(t, err)
	require.Len(t, objs, 2)

	tmpl := &addonv1alpha1.AddOnTemplate{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, tmpl))
	assert.Equal(t, "helloworld-7-0.1.0", tmpl.Name)
	assert.Equal(t, "helloworld-7", tmpl.Spec.AddonName)
	var deployments int
	for _, m := range tmpl.Spec.AgentSpec.Workload.Manifests {
		raw := string(m.Raw)
		assert.NotContains(t, raw, `"helloworld-agent"`, "every agent object is renamed")
		if strings.Contains(raw, `"kind":"Deployment"`) {
			deployments++
			assert.Contains(t, raw, `"secretName":"helloworld-7-hub-kubeconfig"`)
			assert.Contains(t, raw, `"app.kubernetes.io/name":"helloworld-7-addon"`)
			assert.Contains(t, raw, "/"+agentImage+":", "the image still maps to the example's agent")
		}
	}
	assert.Equal(t, 1, deployments)

	cma := &addonv1alpha1.ClusterManagementAddOn{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[1].Object, cma))
	assert.Equal(t, "helloworld-7", cma.Name)
	require.NotEmpty(t, cma.Spec.SupportedConfigs)
	assert.Equal(t, "helloworld-7-0.1.0", cma.Spec.SupportedConfigs[0].DefaultConfig.Name)
}
