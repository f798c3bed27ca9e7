package klusterlet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestValuesFile installs a hub with `hub init --values-file` and joins
// cluster1 with `join --klusterlet-values-file`, each file in the charts'
// values: a file the verb cannot apply changes nothing; the operators' Pods
// carry the file's overrides and are admitted under restricted Pod
// Security; the ClusterManager and the Klusterlet carry the components'
// placement, from which the operators render the hub controller and the
// agent; a flag given wins over the file.
func TestValuesFile(t *testing.T) {
	ctx, env, _ := hubtest.StartRunner(t, 10*time.Minute, framework.Options{Clusters: []string{clusterName}})
	hub, spoke := env.Cluster("hub").Client(), env.Cluster(clusterName).Client()
	onHub := clitest.CLI{Kubeconfig: env.Kubeconfig()}
	onSpoke := clitest.CLI{Kubeconfig: env.Kubeconfig(), Context: clusterName}
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	nodeSelector := map[string]string{"kubernetes.io/os": "linux"}
	tolerations := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ocm", Effect: corev1.TaintEffectNoSchedule}}

	t.Run("a values file hub init cannot apply installs nothing", func(t *testing.T) {
		for _, tt := range []struct{ content, want string }{
			{"clusterManager:\n  tlsProfile:\n    minTlsVersion: VersionTLS13\n", "unknown key clusterManager.tlsProfile.minTlsVersion"},
			{"podSecurityContext: {runAsNonRoot: false}\n", "restricted"},
		} {
			file := write("bad.yaml", tt.content)
			r := onHub.Run(ctx, "hub", "init", "--values-file", file)
			require.Error(t, r.Err)
			assert.ErrorContains(t, r.Err, tt.want)
			assert.ErrorContains(t, r.Err, file)
			err := hub.Get(ctx, client.ObjectKey{Name: config.ClusterManagersCRDName}, &apiextensionsv1.CustomResourceDefinition{})
			require.True(t, apierrors.IsNotFound(err), "the ClusterManager CRD after a refused hub init: %v", err)
		}
	})

	t.Run("hub init", func(t *testing.T) {
		file := write("hub.yaml", `
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: ocm, effect: NoSchedule}]
resources: {requests: {cpu: 20m, memory: 64Mi}, limits: {memory: 512Mi}}
priorityClassName: system-cluster-critical
imagePullSecrets: [mirror]
podSecurityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
extraVolumes: [{name: scratch, emptyDir: {}}]
extraVolumeMounts: [{name: scratch, mountPath: /scratch}]
clusterManager:
  registrationConfiguration: {autoApproveUsers: [alice]}
`)
		clitest.ExpectOK(t, onHub.Run(ctx, "hub", "init", "--values-file", file, "--auto-approved-csr-identities", "bob", "--wait", "--timeout", "2m"))
		resources := corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		}
		op := &appsv1.Deployment{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment}, op))
		pod := op.Spec.Template.Spec
		assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
		assert.Equal(t, []corev1.LocalObjectReference{{Name: pullsecret.Name}, {Name: "mirror"}}, pod.ImagePullSecrets)
		assert.Equal(t, nodeSelector, pod.NodeSelector)
		assert.Equal(t, tolerations, pod.Tolerations)
		assert.Equal(t, int64(65532), *pod.SecurityContext.RunAsUser)
		assert.Equal(t, "scratch", pod.Volumes[0].Name)
		assert.Equal(t, "/scratch", pod.Containers[0].VolumeMounts[0].MountPath)
		assert.Equal(t, resources.Requests.Cpu().String(), pod.Containers[0].Resources.Requests.Cpu().String())

		cm := &operatorv1.ClusterManager{}
		require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm))
		assert.Equal(t, nodeSelector, cm.Spec.NodePlacement.NodeSelector)
		assert.Equal(t, []string{"bob"}, cm.Spec.RegistrationConfiguration.AutoApproveUsers, "the flag wins over the file's autoApproveUsers")
		expectPod(ctx, t, hub, config.HubNamespace, config.HubControllerDeployment, nodeSelector, "", resources)
		kit.ExpectSharedNamespace(ctx, t, hub, config.OperatorNamespace)
		kit.ExpectRestrictedPods(ctx, t, hub, config.HubNamespace)
	})

	t.Run("join", func(t *testing.T) {
		r := onHub.Run(ctx, "hub", "token", "-o", "json")
		clitest.ExpectOK(t, r)
		var token hubcli.JoinInfo
		require.NoError(t, json.Unmarshal([]byte(r.Out), &token))
		caFile := write("hub-ca.crt", string(env.Cluster("hub").CAData()))
		file := write("klusterlet.yaml", `
klusterlet: {clusterName: from-file, mode: Singleton}
nodeSelector: {kubernetes.io/os: linux}
resources: {requests: {cpu: 30m}}
priorityClassName: system-node-critical
operator:
  resources: {requests: {cpu: 10m}}
  securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: {drop: [ALL]}}
podSecurity: {enforceSharedNamespaces: true}
`)
		clitest.ExpectOK(t, onSpoke.Run(ctx, "join", "--klusterlet-values-file", file, "--cluster-name", clusterName,
			"--hub-apiserver", env.Cluster("hub").Server(), "--hub-token", token.HubToken, "--ca-file", caFile, "--image", image))
		k := &operatorv1.Klusterlet{}
		require.NoError(t, spoke.Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k))
		assert.Equal(t, clusterName, k.Spec.ClusterName, "the flag wins over the file's clusterName")
		assert.Equal(t, operatorv1.InstallModeSingleton, k.Spec.DeployOption.Mode)
		assert.Equal(t, "system-node-critical", k.Spec.PriorityClassName)
		op := &appsv1.Deployment{}
		require.NoError(t, spoke.Get(ctx, client.ObjectKey{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName}, op))
		pod := op.Spec.Template.Spec
		assert.Equal(t, nodeSelector, pod.NodeSelector)
		assert.Equal(t, "10m", pod.Containers[0].Resources.Requests.Cpu().String(), "operator.resources win for the operator")
		assert.True(t, *pod.Containers[0].SecurityContext.RunAsNonRoot)
		expectPod(ctx, t, spoke, config.AgentNamespace, config.AgentDeployment, nodeSelector, "system-node-critical",
			corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("30m")}})
		checked := kit.ExpectRestrictedPods(ctx, t, spoke, operatorv1.OperatorNamespace, config.AgentNamespace)
		assert.True(t, slices.Contains(checked, config.AgentNamespace+"/"+config.AgentDeployment), "checked %v", checked)
		// podSecurity.enforceSharedNamespaces: the operator makes the add-on
		// agents' namespace enforce restricted too.
		assert.Contains(t, pod.Containers[0].Args, "--"+podsecurity.SharedEnforceFlag)
		framework.Eventually(ctx, t, time.Minute, "namespace "+addonv1alpha1.DefaultAddonInstallNamespace+" enforcing restricted", func(ctx context.Context) (bool, error) {
			ns := &corev1.Namespace{}
			if err := spoke.Get(ctx, client.ObjectKey{Name: addonv1alpha1.DefaultAddonInstallNamespace}, ns); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return maps.Equal(ns.Labels, labels.Merge(ns.Labels, podsecurity.Labels())), nil
		})
	})
}

// expectPod waits until the Deployment an operator renders places its Pod
// with nodeSelector and priorityClassName and sizes its container with
// resources.
func expectPod(ctx context.Context, t *testing.T, c client.Client, namespace, name string, nodeSelector map[string]string, priorityClassName string, resources corev1.ResourceRequirements) {
	t.Helper()
	framework.Eventually(ctx, t, wait, fmt.Sprintf("Deployment %s/%s with the values file's placement", namespace, name), func(ctx context.Context) (bool, error) {
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, dep); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		pod := dep.Spec.Template.Spec
		if !reflect.DeepEqual(pod.NodeSelector, nodeSelector) || pod.PriorityClassName != priorityClassName {
			return false, nil
		}
		got := pod.Containers[0].Resources
		for res, q := range resources.Requests {
			if v, ok := got.Requests[res]; !ok || v.Cmp(q) != 0 {
				return false, nil
			}
		}
		return true, nil
	})
}
