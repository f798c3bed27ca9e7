package helm

import (
	"encoding/base64"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// operatorPodValues are chart values that set every override of the
// operator's Pod (and with nodeSelector, tolerations and resources the
// CR's scheduling); testOperatorPod is the same in Go.
func operatorPodValues() map[string]any {
	return map[string]any{
		"imagePullSecrets": []string{"mirror-pull"},
		"nodeSelector":     map[string]string{"node-role.kubernetes.io/control-plane": ""},
		"tolerations":      []map[string]any{{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"resources":        map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]string{"memory": "1Gi"}},
		"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []map[string]any{{"matchExpressions": []map[string]any{{"key": "kubernetes.io/arch", "operator": "In", "values": []string{"amd64", "arm64"}}}}},
		}}},
		"priorityClassName":  "system-cluster-critical",
		"podSecurityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "fsGroup": 65532, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true,
			"capabilities": map[string]any{"drop": []string{"ALL"}},
		},
		"extraVolumes":      []map[string]any{{"name": "ca", "configMap": map[string]any{"name": "corporate-ca"}}},
		"extraVolumeMounts": []map[string]any{{"name": "ca", "mountPath": "/etc/ssl/corporate", "readOnly": true}},
	}
}

func testOperatorPod() config.OperatorPod {
	return config.OperatorPod{
		Scheduling:        testScheduling(),
		ImagePullSecrets:  []string{"mirror-pull"},
		PriorityClassName: "system-cluster-critical",
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}}}}},
		}}},
		PodSecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		ExtraVolumes:      []corev1.Volume{{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "corporate-ca"}}}}},
		ExtraVolumeMounts: []corev1.VolumeMount{{Name: "ca", MountPath: "/etc/ssl/corporate", ReadOnly: true}},
	}
}

// TestChartsOperatorPod checks that each chart renders the overrides of the
// operator's Pod as the Go renderer does for config.OperatorPod, with
// nodeSelector, tolerations and resources also on the ClusterManager or
// Klusterlet.
func TestChartsOperatorPod(t *testing.T) {
	t.Run("hub", func(t *testing.T) {
		out, err := helmTemplate(t, "hub", operatorPodValues(), nil)
		require.NoError(t, err, out)
		want, err := config.HubOperatorObjects(config.HubOperatorValues{Image: defaultImage(t, "hub"), OperatorPod: testOperatorPod(), HubController: testScheduling()})
		require.NoError(t, err)
		compare(t, out, want)
	})
	t.Run("klusterlet", func(t *testing.T) {
		bootstrap := []byte("apiVersion: v1\nkind: Config\n")
		values := operatorPodValues()
		values["klusterlet"] = map[string]any{"clusterName": "cluster1"}
		out, err := helmTemplate(t, "klusterlet", values, map[string]string{"bootstrapHubKubeConfig": string(bootstrap)})
		require.NoError(t, err, out)
		want, _, err := config.KlusterletInstallObjects(config.KlusterletOperatorValues{Image: defaultImage(t, "klusterlet"), OperatorPod: testOperatorPod()},
			config.AgentValues{ClusterName: "cluster1", Image: defaultImage(t, "klusterlet"), BootstrapKubeconfig: bootstrap, PriorityClassName: "system-cluster-critical", Scheduling: testScheduling()}, false)
		require.NoError(t, err)
		compare(t, out, want)
	})
	t.Run("klusterlet operator values win", func(t *testing.T) {
		bootstrap := []byte("apiVersion: v1\nkind: Config\n")
		small := map[string]any{"requests": map[string]string{"cpu": "10m"}}
		values := map[string]any{
			"klusterlet": map[string]any{"clusterName": "cluster1"},
			"resources":  map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "256Mi"}, "limits": map[string]string{"memory": "1Gi"}},
			"operator":   map[string]any{"resources": small},
		}
		out, err := helmTemplate(t, "klusterlet", values, map[string]string{"bootstrapHubKubeConfig": string(bootstrap)})
		require.NoError(t, err, out)
		op := config.OperatorPod{Scheduling: config.Scheduling{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}
		want, _, err := config.KlusterletInstallObjects(config.KlusterletOperatorValues{Image: defaultImage(t, "klusterlet"), OperatorPod: op},
			config.AgentValues{ClusterName: "cluster1", Image: defaultImage(t, "klusterlet"), BootstrapKubeconfig: bootstrap, Scheduling: config.Scheduling{Resources: testScheduling().Resources}}, false)
		require.NoError(t, err)
		compare(t, out, want)
	})
}

// TestChartsImageCredentials checks the image pull credentials Secret of
// images.imageCredentials: of type kubernetes.io/dockerconfigjson in the
// operator's namespace, listed in the operator Pod's imagePullSecrets.
func TestChartsImageCredentials(t *testing.T) {
	const dockerConfig = `{"auths":{"registry.example.com":{"auth":"dTpw"}}}`
	tests := []struct {
		name  string
		creds map[string]any
		want  string
	}{
		{name: "docker config", creds: map[string]any{"createImageCredentials": true, "dockerConfigJson": dockerConfig}, want: dockerConfig},
		{
			name:  "user name and password",
			creds: map[string]any{"createImageCredentials": true, "userName": "robot", "password": "s3cret"},
			want:  `{"auths":{"registry.example.com/ocm":{"auth":"cm9ib3Q6czNjcmV0","password":"s3cret","username":"robot"}}}`,
		},
	}
	for _, chart := range []string{"hub", "klusterlet"} {
		for _, tt := range tests {
			t.Run(chart+" "+tt.name, func(t *testing.T) {
				values := map[string]any{
					"images":           map[string]any{"registry": "registry.example.com/ocm", "imageCredentials": tt.creds},
					"imagePullSecrets": []string{"other"},
					"klusterlet":       map[string]any{"clusterName": "cluster1"},
				}
				if chart == "hub" {
					delete(values, "klusterlet")
				}
				out, err := helmTemplate(t, chart, values, map[string]string{"bootstrapHubKubeConfig": "apiVersion: v1\n"})
				require.NoError(t, err, out)
				objs, err := config.DecodeDocuments([]byte(out))
				require.NoError(t, err)
				secret := find(objs, "Secret", pullsecret.Name)
				require.NotNil(t, secret, "no Secret %s", pullsecret.Name)
				assert.Equal(t, "open-cluster-management", secret.GetNamespace())
				assert.Equal(t, string(corev1.SecretTypeDockerConfigJson), secret.Object["type"])
				data, _, _ := unstructured.NestedString(secret.Object, "data", corev1.DockerConfigJsonKey)
				got, err := base64.StdEncoding.DecodeString(data)
				require.NoError(t, err)
				assert.JSONEq(t, tt.want, string(got))
				var operator *unstructured.Unstructured
				for _, o := range objs {
					if o.GetKind() == "Deployment" && o.GetNamespace() == "open-cluster-management" {
						operator = o
					}
				}
				require.NotNil(t, operator, "no operator Deployment")
				secrets, _, _ := unstructured.NestedSlice(operator.Object, "spec", "template", "spec", "imagePullSecrets")
				assert.Equal(t, []any{map[string]any{"name": pullsecret.Name}, map[string]any{"name": "other"}}, secrets)
			})
		}
	}
	_, err := helmTemplate(t, "hub", map[string]any{"images": map[string]any{"imageCredentials": map[string]any{"createImageCredentials": true, "userName": "robot"}}}, nil)
	assert.ErrorContains(t, err, "images.imageCredentials.password")
}

// TestChartsRefuseUnrestricted checks that each chart refuses overrides of
// the operator's Pod that break restricted Pod Security, as the Go renderer
// (config.CheckRestricted) does.
func TestChartsRefuseUnrestricted(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		pod    config.OperatorPod
		want   string
	}{{
		name:   "root user",
		values: map[string]any{"podSecurityContext": map[string]any{"runAsNonRoot": false}},
		pod:    config.OperatorPod{PodSecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}},
		want:   "runAsNonRoot",
	}, {
		name:   "privilege escalation",
		values: map[string]any{"securityContext": map[string]any{"capabilities": map[string]any{"drop": []string{"ALL"}}}},
		pod:    config.OperatorPod{SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}},
		want:   "allowPrivilegeEscalation",
	}, {
		name:   "capabilities",
		values: map[string]any{"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}, "add": []string{"NET_ADMIN"}}}},
		pod:    config.OperatorPod{SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}}}},
		want:   "capabilities",
	}, {
		name: "SELinux type",
		values: map[string]any{"podSecurityContext": map[string]any{
			"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}, "seLinuxOptions": map[string]any{"type": "spc_t"},
		}},
		pod: config.OperatorPod{PodSecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}, SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"},
		}},
		want: "seLinuxOptions",
	}, {
		name:   "hostPath volume",
		values: map[string]any{"extraVolumes": []map[string]any{{"name": "host", "hostPath": map[string]any{"path": "/etc"}}}},
		pod:    config.OperatorPod{ExtraVolumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}},
		want:   "hostPath",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.HubOperatorObjects(config.HubOperatorValues{OperatorPod: tt.pod})
			require.ErrorContains(t, err, tt.want, "the Go renderer")
			assert.ErrorContains(t, err, "restricted")
			for _, chart := range []string{"hub", "klusterlet"} {
				values := map[string]any{"klusterlet": map[string]any{"clusterName": "cluster1"}}
				for k, v := range tt.values {
					values[k] = v
				}
				_, err := helmTemplate(t, chart, values, map[string]string{"bootstrapHubKubeConfig": "apiVersion: v1\n"})
				require.ErrorContains(t, err, tt.want, "chart %s", chart)
				assert.ErrorContains(t, err, "restricted", "chart %s", chart)
			}
		})
	}
}

// find returns the object of kind and name in objs, nil when there is none.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}
