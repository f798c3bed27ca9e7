package helm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
)

// hubInit runs `kubectl ocm hub init --dry-run -o yaml` with args, with no
// cluster, and returns the objects it prints.
func hubInit(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := hub.NewCmdHub(flags, streams)
	cmd.SetArgs(append([]string{"init", "--dry-run", "-o", "yaml"}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub init --dry-run %v: %v", args, err)
	}
	objs, err := config.DecodeDocuments(out.Bytes())
	if err != nil {
		t.Fatalf("decode hub init output: %v", err)
	}
	return objs
}

// TestHubChart checks that the hub chart renders what `hub init` installs.
func TestHubChart(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   func(t *testing.T) []*unstructured.Unstructured
	}{{
		name: "default values, no flags but the image",
		want: func(t *testing.T) []*unstructured.Unstructured { return hubInit(t, "--image", defaultImage(t, "hub")) },
	}, {
		name: "image, auto-approved identities, conversion webhook URL and TLS profile",
		values: map[string]any{
			"images": map[string]any{"registry": "registry.example.com/ocm", "tag": "v1.2.3"},
			"clusterManager": map[string]any{
				"registrationConfiguration": map[string]any{"autoApproveUsers": []string{"system:bootstrap:abc", "alice"}},
				"tlsProfile":                map[string]any{"minTLSVersion": "VersionTLS13", "cipherSuites": []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}},
			},
			"conversionWebhookURL": "https://127.0.0.1:9555/convert",
		},
		want: func(t *testing.T) []*unstructured.Unstructured {
			return hubInit(t, "--image", "registry.example.com/ocm/ocm-controller:v1.2.3",
				"--auto-approved-csr-identities", "system:bootstrap:abc,alice",
				"--conversion-webhook-url", "https://127.0.0.1:9555/convert",
				"--tls-min-version", "VersionTLS13", "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
		},
	}, {
		name:   "network policy, no namespace",
		values: map[string]any{"clusterManager": map[string]any{"networkPolicyConfiguration": map[string]any{}}},
		want: func(t *testing.T) []*unstructured.Unstructured {
			return hubInit(t, "--image", defaultImage(t, "hub"), "--network-policy")
		},
	}, {
		name: "network policy, both namespaces",
		values: map[string]any{"clusterManager": map[string]any{
			"networkPolicyConfiguration": map[string]any{"monitoringNamespace": "monitoring", "apiServerNamespace": "kube-system"},
		}},
		want: func(t *testing.T) []*unstructured.Unstructured {
			return hubInit(t, "--image", defaultImage(t, "hub"),
				"--network-policy-monitoring-namespace", "monitoring", "--network-policy-apiserver-namespace", "kube-system")
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := helmTemplate(t, "hub", tt.values, nil)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			compare(t, out, tt.want(t))
		})
	}
}

// TestHubChartRejects checks that the chart refuses what hub init refuses.
func TestHubChartRejects(t *testing.T) {
	_, err := helmTemplate(t, "hub", map[string]any{"conversionWebhookURL": "http://hub.example.com/convert"}, nil)
	require.ErrorContains(t, err, "conversionWebhookURL")
	assert.ErrorContains(t, err, "https://")
}

// testScheduling places a Pod on control-plane nodes and sizes its
// container, as the tests' chart values do.
func testScheduling() config.Scheduling {
	return config.Scheduling{
		NodeSelector: map[string]string{"node-role.kubernetes.io/control-plane": ""},
		Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
	}
}
