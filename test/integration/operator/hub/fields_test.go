package hub

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testNetworkPolicies sets spec.networkPolicyConfiguration, edits it and
// removes it: the operator applies the hub controller's and the hub
// tunnel's NetworkPolicies,
// changes them and deletes them, and the hub stays available throughout
// (the test clusters enforce no NetworkPolicy, so the webhook keeps being
// called as before).
func testNetworkPolicies(t *testing.T, s *suite) {
	// The hub controller's and the hub tunnel's Pod labels and ports.
	pods := map[string]map[string]string{}
	ports := map[string]map[string]int32{}
	for _, name := range []string{config.HubControllerDeployment, config.HubTunnelDeployment} {
		dep := &appsv1.Deployment{}
		if err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: name}, dep); err != nil {
			t.Fatal(err)
		}
		pods[name], ports[name] = dep.Spec.Template.Labels, map[string]int32{}
		for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
			ports[name][p.Name] = p.ContainerPort
		}
	}
	// want is one policy: the Deployment whose Pods it selects, the
	// container port it opens and the namespace it opens it to (empty:
	// every source).
	type want struct{ dep, port, from string }
	const hub, tunnel = config.HubControllerDeployment, config.HubTunnelDeployment
	steps := []struct {
		name string
		np   *operatorv1.NetworkPolicyConfiguration
		want map[string]want
	}{
		{name: "apiServerNamespace", np: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system"},
			want: map[string]want{
				config.HubWebhookNetworkPolicy: {hub, "webhook", "kube-system"},
				config.HubTunnelNetworkPolicy:  {tunnel, "tunnel", "kube-system"},
			}},
		{name: "edited to monitoringNamespace", np: &operatorv1.NetworkPolicyConfiguration{MonitoringNamespace: "monitoring"},
			want: map[string]want{
				config.HubWebhookNetworkPolicy:       {hub, "webhook", ""},
				config.HubMetricsNetworkPolicy:       {hub, "metrics", "monitoring"},
				config.HubTunnelNetworkPolicy:        {tunnel, "tunnel", ""},
				config.HubTunnelMetricsNetworkPolicy: {tunnel, "metrics", "monitoring"},
			}},
		{name: "removed", np: nil, want: map[string]want{}},
	}
	for _, step := range steps {
		gen := s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.NetworkPolicyConfiguration = step.np })
		framework.Eventually(s.ctx, t, wait, "the hub's NetworkPolicies, "+step.name, func(ctx context.Context) (bool, error) {
			list := &networkingv1.NetworkPolicyList{}
			if err := s.admin.List(ctx, list, client.InNamespace(config.HubNamespace)); err != nil {
				return false, err
			}
			if len(list.Items) != len(step.want) {
				return false, fmt.Errorf("%d NetworkPolicies, want %d", len(list.Items), len(step.want))
			}
			for i := range list.Items {
				np := &list.Items[i]
				w, ok := step.want[np.Name]
				if !ok {
					return false, fmt.Errorf("unexpected NetworkPolicy %s", np.Name)
				}
				if err := checkPolicy(np, pods[w.dep], ports[w.dep][w.port], w.from); err != nil {
					return false, fmt.Errorf("%s: %w", np.Name, err)
				}
			}
			return true, nil
		})
		s.waitAvailable(t, gen)
	}
}

// checkPolicy checks that np selects the Pods labeled pod and allows TCP
// ingress to port only, from namespace from (empty: from every source).
func checkPolicy(np *networkingv1.NetworkPolicy, pod map[string]string, port int32, from string) error {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod)) {
		return fmt.Errorf("podSelector %v does not select the Pod labeled %v (%v)", np.Spec.PodSelector, pod, err)
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) != 1 {
		return fmt.Errorf("policyTypes %v with %d ingress rules, want one Ingress rule", np.Spec.PolicyTypes, len(np.Spec.Ingress))
	}
	in := np.Spec.Ingress[0]
	if port == 0 || len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.IntVal != port ||
		in.Ports[0].Protocol == nil || *in.Ports[0].Protocol != corev1.ProtocolTCP {
		return fmt.Errorf("ports %+v, want TCP %d", in.Ports, port)
	}
	switch {
	case from == "" && len(in.From) != 0:
		return fmt.Errorf("from %+v, want every source", in.From)
	case from != "" && (len(in.From) != 1 || in.From[0].NamespaceSelector == nil ||
		!reflect.DeepEqual(in.From[0].NamespaceSelector.MatchLabels, map[string]string{corev1.LabelMetadataName: from})):
		return fmt.Errorf("from %+v, want namespace %s", in.From, from)
	}
	return nil
}

// testUnsupportedServers sets serverConfiguration, which configures servers
// the hub does not run, and an importerConfiguration renderer the importer
// does not have (OCM has no such renderer either): Applied turns False naming both fields, the hub is left as
// it was, and removing them applies again.
func testUnsupportedServers(t *testing.T, s *suite) {
	dep, err := s.controller(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.ServerConfiguration = &operatorv1.ServerConfiguration{EndpointsExposure: []operatorv1.EndpointExposure{{Protocol: "grpc"}}}
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{ImporterConfiguration: &operatorv1.ImporterConfiguration{Renderers: []string{"render-auto", "render-from-cluster-api"}}}
	})
	applied := s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionFalse)
	if applied.Reason != config.ReasonImporterConfigurationUnsupported && applied.Reason != config.ReasonServerConfigurationUnsupported {
		t.Errorf("Applied reason %s, want %s or %s", applied.Reason, config.ReasonImporterConfigurationUnsupported, config.ReasonServerConfigurationUnsupported)
	}
	for _, field := range []string{"spec.serverConfiguration", "spec.registrationConfiguration.importerConfiguration"} {
		if !strings.Contains(applied.Message, field) {
			t.Errorf("Applied message %q does not name %s", applied.Message, field)
		}
	}
	s.waitCondition(t, gen, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionTrue)
	if now, err := s.controller(s.ctx); err != nil {
		t.Error(err)
	} else if now.Generation != dep.Generation {
		t.Errorf("the hub controller Deployment changed: generation %d, was %d", now.Generation, dep.Generation)
	}
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.ServerConfiguration, cm.Spec.RegistrationConfiguration = nil, nil
	}))
}
