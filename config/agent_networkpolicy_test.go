package config

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// TestAgentNetworkPolicies checks the NetworkPolicies rendered from the
// Klusterlet's spec.networkPolicyConfiguration, in Default and Hosted
// mode: every Pod of the agent's namespace denied, the agent's egress to DNS
// and to its endpoints, its metrics port open to the monitoring namespace.
func TestAgentNetworkPolicies(t *testing.T) {
	hub := Endpoint{CIDR: "172.31.1.2/32", Port: 6443}
	anyProxy := Endpoint{Port: 3128}
	tests := []struct {
		name   string
		np     *AgentNetworkPolicy
		hosted bool
		want   []string
	}{
		{name: "unset: no policy"},
		{name: "egress only", np: &AgentNetworkPolicy{Egress: []Endpoint{hub, anyProxy}},
			want: []string{AgentDenyNetworkPolicy, AgentEgressNetworkPolicy}},
		{name: "monitoringNamespace", np: &AgentNetworkPolicy{MonitoringNamespace: "monitoring", Egress: []Endpoint{hub}},
			want: []string{AgentDenyNetworkPolicy, AgentEgressNetworkPolicy, AgentMetricsNetworkPolicy}},
		{name: "hosted", hosted: true, np: &AgentNetworkPolicy{MonitoringNamespace: "monitoring", Egress: []Endpoint{hub}},
			want: []string{AgentDenyNetworkPolicy, AgentEgressNetworkPolicy, AgentMetricsNetworkPolicy}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := AgentValues{ClusterName: "cluster1", NetworkPolicy: tt.np, BootstrapKubeconfig: []byte("kubeconfig")}
			var objs []*unstructured.Unstructured
			var err error
			if tt.hosted {
				objs, _, err = HostedAgentObjects(v)
			} else {
				objs, err = AgentObjects(v)
			}
			if err != nil {
				t.Fatal(err)
			}
			dep, policies := deploymentAndPolicies(t, objs)
			if dep == nil {
				t.Fatal("no agent Deployment")
			}
			if len(policies) != len(tt.want) {
				t.Fatalf("NetworkPolicies %v, want %v", keys(policies), tt.want)
			}
			if tt.np == nil {
				return
			}
			for _, name := range tt.want {
				np := policies[name]
				if np == nil {
					t.Fatalf("no NetworkPolicy %s", name)
				}
				if np.Namespace != dep.Namespace {
					t.Errorf("%s in namespace %s, the agent in %s", name, np.Namespace, dep.Namespace)
				}
				sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
				if err != nil || !sel.Matches(labels.Set(dep.Spec.Template.Labels)) {
					t.Errorf("%s: podSelector %v does not select the agent's Pod", name, np.Spec.PodSelector)
				}
			}
			deny := policies[AgentDenyNetworkPolicy].Spec
			if len(deny.PodSelector.MatchLabels) != 0 || len(deny.PodSelector.MatchExpressions) != 0 || len(deny.Ingress) != 0 || len(deny.Egress) != 0 ||
				!reflect.DeepEqual(deny.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
				t.Errorf("%s: %+v, want every Pod, both directions, no rule", AgentDenyNetworkPolicy, deny)
			}
			checkEgress(t, policies[AgentEgressNetworkPolicy].Spec, tt.np.Egress)
			if tt.np.MonitoringNamespace != "" {
				checkMetrics(t, policies[AgentMetricsNetworkPolicy].Spec, dep, tt.np.MonitoringNamespace)
			}
		})
	}
}

// deploymentAndPolicies picks the agent Deployment and the NetworkPolicies
// out of objs.
func deploymentAndPolicies(t *testing.T, objs []*unstructured.Unstructured) (*appsv1.Deployment, map[string]*networkingv1.NetworkPolicy) {
	t.Helper()
	var dep *appsv1.Deployment
	policies := map[string]*networkingv1.NetworkPolicy{}
	for _, u := range objs {
		switch u.GetKind() {
		case "Deployment":
			dep = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
				t.Fatal(err)
			}
		case "NetworkPolicy":
			np := &networkingv1.NetworkPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np); err != nil {
				t.Fatal(err)
			}
			policies[np.Name] = np
		}
	}
	return dep, policies
}

// checkEgress checks that spec allows egress to DNS and to each endpoint,
// and nothing else.
func checkEgress(t *testing.T, spec networkingv1.NetworkPolicySpec, endpoints []Endpoint) {
	t.Helper()
	if !reflect.DeepEqual(spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) || len(spec.Ingress) != 0 {
		t.Fatalf("egress policy: policyTypes %v, %d ingress rules; want Egress only", spec.PolicyTypes, len(spec.Ingress))
	}
	if len(spec.Egress) != 1+len(endpoints) {
		t.Fatalf("egress rules %+v, want DNS and %v", spec.Egress, endpoints)
	}
	dns := spec.Egress[0]
	if len(dns.To) != 0 || len(dns.Ports) != 2 || dns.Ports[0].Port.IntVal != 53 || *dns.Ports[0].Protocol != corev1.ProtocolUDP ||
		dns.Ports[1].Port.IntVal != 53 || *dns.Ports[1].Protocol != corev1.ProtocolTCP {
		t.Errorf("DNS rule %+v, want UDP and TCP 53 to every address", dns)
	}
	for i, e := range endpoints {
		r := spec.Egress[i+1]
		if len(r.Ports) != 1 || r.Ports[0].Port.IntVal != e.Port || *r.Ports[0].Protocol != corev1.ProtocolTCP {
			t.Errorf("rule %d ports %+v, want TCP %d", i+1, r.Ports, e.Port)
		}
		switch {
		case e.CIDR == "" && len(r.To) != 0:
			t.Errorf("rule %d to %+v, want every address", i+1, r.To)
		case e.CIDR != "" && (len(r.To) != 1 || r.To[0].IPBlock == nil || r.To[0].IPBlock.CIDR != e.CIDR || r.To[0].PodSelector != nil || r.To[0].NamespaceSelector != nil):
			t.Errorf("rule %d to %+v, want ipBlock %s", i+1, r.To, e.CIDR)
		}
	}
}

// checkMetrics checks that spec opens the agent container's metrics port to
// namespace only.
func checkMetrics(t *testing.T, spec networkingv1.NetworkPolicySpec, dep *appsv1.Deployment, namespace string) {
	t.Helper()
	var port int32
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == "metrics" {
			port = p.ContainerPort
		}
	}
	if port == 0 || !reflect.DeepEqual(spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(spec.Ingress) != 1 {
		t.Fatalf("metrics policy %+v (container port %d), want one Ingress rule", spec, port)
	}
	in := spec.Ingress[0]
	if len(in.Ports) != 1 || in.Ports[0].Port.IntVal != port || *in.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("metrics ports %+v, want TCP %d", in.Ports, port)
	}
	if len(in.From) != 1 || in.From[0].NamespaceSelector == nil || in.From[0].PodSelector != nil ||
		!reflect.DeepEqual(in.From[0].NamespaceSelector.MatchLabels, map[string]string{corev1.LabelMetadataName: namespace}) {
		t.Errorf("metrics from %+v, want namespace %s", in.From, namespace)
	}
}

// TestAgentNetworkPolicyOf checks the endpoints taken from URLs: addresses,
// default ports, host aliases, host names, duplicates and bad URLs.
func TestAgentNetworkPolicyOf(t *testing.T) {
	apiServer := Endpoint{CIDR: "10.96.0.1/32", Port: 443}
	tests := []struct {
		name    string
		np      *operatorv1.KlusterletNetworkPolicyConfiguration
		alias   *operatorv1.HubApiServerHostAlias
		urls    []string
		want    *AgentNetworkPolicy
		wantErr string
	}{
		{name: "unset", urls: []string{"https://172.31.1.2:6443"}},
		{name: "addresses, ports, duplicates", np: &operatorv1.KlusterletNetworkPolicyConfiguration{MonitoringNamespace: "monitoring"},
			urls: []string{"https://172.31.1.2:6443", "https://172.31.1.2:6443", "http://[fd00::1]", "https://10.96.0.1"},
			want: &AgentNetworkPolicy{MonitoringNamespace: "monitoring", Egress: []Endpoint{apiServer, {CIDR: "172.31.1.2/32", Port: 6443}, {CIDR: "fd00::1/128", Port: 80}}}},
		{name: "host name: its alias, or every address", np: &operatorv1.KlusterletNetworkPolicyConfiguration{},
			alias: &operatorv1.HubApiServerHostAlias{IP: "192.168.1.5", Hostname: "hub.example.com"},
			urls:  []string{"https://hub.example.com:6443", "http://proxy.example.com:3128"},
			want:  &AgentNetworkPolicy{Egress: []Endpoint{{Port: 3128}, apiServer, {CIDR: "192.168.1.5/32", Port: 6443}}}},
		{name: "no host", np: &operatorv1.KlusterletNetworkPolicyConfiguration{}, urls: []string{"/no/host"}, wantErr: `"/no/host" is not a URL with a host`},
		{name: "bad port", np: &operatorv1.KlusterletNetworkPolicyConfiguration{}, urls: []string{"https://hub:0"}, wantErr: `invalid port "0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &operatorv1.Klusterlet{Spec: operatorv1.KlusterletSpec{NetworkPolicyConfiguration: tt.np, HubApiServerHostAlias: tt.alias}}
			got, err := AgentNetworkPolicyOf(k, tt.urls, []Endpoint{apiServer})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
