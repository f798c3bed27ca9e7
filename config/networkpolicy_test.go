package config

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// TestHubNetworkPolicies checks the NetworkPolicies rendered from
// spec.networkPolicyConfiguration: they select the hub controller's or the
// hub tunnel's Pod and open the ports its Deployment declares, to the
// namespaces named.
func TestHubNetworkPolicies(t *testing.T) {
	type rule struct {
		deployment string // the Deployment whose Pod the policy selects
		port       string // the container port's name in the Deployment
		from       string // the namespace allowed; empty: every source
	}
	webhook := func(from string) rule { return rule{HubControllerDeployment, "webhook", from} }
	tunnel := func(from string) rule { return rule{HubTunnelDeployment, "tunnel", from} }
	metrics := func(deployment string) rule { return rule{deployment, "metrics", "monitoring"} }
	tests := []struct {
		name   string
		np     *operatorv1.NetworkPolicyConfiguration
		url    string
		want   map[string]rule
		wantNo bool
	}{
		{name: "unset: no policy", wantNo: true},
		{name: "empty: the webhook open to all, metrics closed", np: &operatorv1.NetworkPolicyConfiguration{},
			want: map[string]rule{HubWebhookNetworkPolicy: webhook(""), HubTunnelNetworkPolicy: tunnel("")}},
		{name: "apiServerNamespace", np: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system"},
			want: map[string]rule{HubWebhookNetworkPolicy: webhook("kube-system"), HubTunnelNetworkPolicy: tunnel("kube-system")}},
		{name: "both, webhook at the URL's port", np: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system", MonitoringNamespace: "monitoring"},
			url: "https://127.0.0.1:9555/convert",
			want: map[string]rule{
				HubWebhookNetworkPolicy: webhook("kube-system"), HubMetricsNetworkPolicy: metrics(HubControllerDeployment),
				HubTunnelNetworkPolicy: tunnel("kube-system"), HubTunnelMetricsNetworkPolicy: metrics(HubTunnelDeployment),
			}},
		{name: "monitoringNamespace only", np: &operatorv1.NetworkPolicyConfiguration{MonitoringNamespace: "monitoring"},
			want: map[string]rule{
				HubWebhookNetworkPolicy: webhook(""), HubMetricsNetworkPolicy: metrics(HubControllerDeployment),
				HubTunnelNetworkPolicy: tunnel(""), HubTunnelMetricsNetworkPolicy: metrics(HubTunnelDeployment),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := HubObjects(HubValues{NetworkPolicy: tt.np, ConversionWebhookURL: tt.url})
			if err != nil {
				t.Fatal(err)
			}
			deps := map[string]*appsv1.Deployment{}
			policies := map[string]*networkingv1.NetworkPolicy{}
			for _, u := range objs {
				switch u.GetKind() {
				case "Deployment":
					dep := &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
						t.Fatal(err)
					}
					deps[dep.Name] = dep
				case "NetworkPolicy":
					np := &networkingv1.NetworkPolicy{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np); err != nil {
						t.Fatal(err)
					}
					policies[np.Name] = np
				}
			}
			if tt.wantNo {
				if len(policies) > 0 {
					t.Fatalf("NetworkPolicies %v rendered without networkPolicyConfiguration", keys(policies))
				}
				return
			}
			if len(policies) != len(tt.want) {
				t.Errorf("NetworkPolicies %v, want %d", keys(policies), len(tt.want))
			}
			for name, want := range tt.want {
				np, ok := policies[name]
				if !ok {
					t.Errorf("no NetworkPolicy %s", name)
					continue
				}
				dep := deps[want.deployment]
				if dep == nil {
					t.Fatalf("no Deployment %s", want.deployment)
				}
				ports := map[string]int32{}
				for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
					ports[p.Name] = p.ContainerPort
				}
				sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
				if err != nil || sel.Empty() || !sel.Matches(labels.Set(dep.Spec.Template.Labels)) || np.Namespace != dep.Namespace {
					t.Errorf("%s: podSelector %v in %s does not select the Pod of %s in %s", name, np.Spec.PodSelector, np.Namespace, dep.Name, dep.Namespace)
				}
				if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) != 1 {
					t.Fatalf("%s: policyTypes %v, %d ingress rules; want one Ingress rule", name, np.Spec.PolicyTypes, len(np.Spec.Ingress))
				}
				in := np.Spec.Ingress[0]
				if len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.IntVal != ports[want.port] || ports[want.port] == 0 ||
					in.Ports[0].Protocol == nil || *in.Ports[0].Protocol != corev1.ProtocolTCP {
					t.Errorf("%s: ports %+v, want TCP %d (container port %s)", name, in.Ports, ports[want.port], want.port)
				}
				switch {
				case want.from == "" && len(in.From) != 0:
					t.Errorf("%s: from %+v, want every source", name, in.From)
				case want.from != "" && (len(in.From) != 1 || in.From[0].NamespaceSelector == nil || in.From[0].PodSelector != nil ||
					!reflect.DeepEqual(in.From[0].NamespaceSelector.MatchLabels, map[string]string{corev1.LabelMetadataName: want.from})):
					t.Errorf("%s: from %+v, want namespace %s", name, in.From, want.from)
				}
			}
		})
	}
}

// keys returns the names of m.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
