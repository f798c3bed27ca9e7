package klusterlet

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testNetworkPolicies sets the Klusterlet's networkPolicyConfiguration and
// checks the NetworkPolicies the operator applies to the agent's namespace:
// a default deny, the agent's egress to DNS, to the hub at hubServer and to
// this cluster's API server, and its metrics port open to the monitoring
// namespace; the cluster stays joined. Then it unsets the field, and the
// operator removes them.
func (s *suite) testNetworkPolicies(t *testing.T, hubServer string) {
	// Where the edits before left the agent.
	k := s.klusterlet(t)
	ns, cluster := k.AgentNamespace(), k.Spec.ClusterName
	t.Run("networkPolicyConfiguration applies the agent's NetworkPolicies", func(t *testing.T) {
		s.waitAvailable(t, "the agent before the edit", ns)
		s.edit(t, func(k *operatorv1.Klusterlet) {
			k.Spec.NetworkPolicyConfiguration = &operatorv1.KlusterletNetworkPolicyConfiguration{MonitoringNamespace: "monitoring"}
		})
		hub, err := config.EndpointOf(hubServer, nil)
		if err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{}
		if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: "default", Name: "kubernetes"}, svc); err != nil {
			t.Fatal(err)
		}
		apiServer := config.Endpoint{CIDR: config.HostCIDR(svc.Spec.ClusterIP), Port: 443}
		var policies map[string]*networkingv1.NetworkPolicy
		framework.Eventually(s.ctx, t, wait, "the agent's NetworkPolicies", func(ctx context.Context) (bool, error) {
			policies, err = s.agentPolicies(ctx, ns)
			if err != nil || len(policies) != 3 {
				return false, fmt.Errorf("NetworkPolicies %v (%v)", keysOf(policies), err)
			}
			return true, nil
		})
		for name, np := range policies {
			if np.Labels[config.KlusterletOwnerLabel] != operatorv1.KlusterletName {
				t.Errorf("NetworkPolicy %s lacks the owner label: %v", name, np.Labels)
			}
		}
		if deny := policies[config.AgentDenyNetworkPolicy]; deny == nil || len(deny.Spec.PodSelector.MatchLabels) != 0 || len(deny.Spec.PolicyTypes) != 2 {
			t.Errorf("default deny policy %+v, want every Pod in both directions", deny)
		}
		egress := egressEndpoints(policies[config.AgentEgressNetworkPolicy])
		for _, want := range []config.Endpoint{hub, apiServer} {
			if !slices.Contains(egress, want) {
				t.Errorf("the agent's egress %+v lacks %+v", egress, want)
			}
		}
		metrics := policies[config.AgentMetricsNetworkPolicy]
		if metrics == nil || len(metrics.Spec.Ingress) != 1 || len(metrics.Spec.Ingress[0].From) != 1 ||
			metrics.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "monitoring" {
			t.Errorf("metrics policy %+v, want ingress from namespace monitoring", metrics)
		}
		s.waitAvailable(t, "the agent with NetworkPolicies", ns)
		s.waitJoined(t, cluster)
	})

	t.Run("unset networkPolicyConfiguration removes them", func(t *testing.T) {
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.NetworkPolicyConfiguration = nil })
		framework.Eventually(s.ctx, t, wait, "the agent's NetworkPolicies removed", func(ctx context.Context) (bool, error) {
			policies, err := s.agentPolicies(ctx, ns)
			if err != nil || len(policies) != 0 {
				return false, fmt.Errorf("NetworkPolicies %v (%v)", keysOf(policies), err)
			}
			return true, nil
		})
		s.waitAvailable(t, "the agent without NetworkPolicies", ns)
	})
}

// agentPolicies returns the NetworkPolicies of namespace by name.
func (s *suite) agentPolicies(ctx context.Context, namespace string) (map[string]*networkingv1.NetworkPolicy, error) {
	list := &networkingv1.NetworkPolicyList{}
	if err := s.spoke.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := map[string]*networkingv1.NetworkPolicy{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// egressEndpoints returns the TCP destinations np allows, as Endpoints.
func egressEndpoints(np *networkingv1.NetworkPolicy) []config.Endpoint {
	if np == nil {
		return nil
	}
	var out []config.Endpoint
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			if p.Protocol == nil || *p.Protocol != corev1.ProtocolTCP || p.Port == nil {
				continue
			}
			if len(r.To) == 0 {
				out = append(out, config.Endpoint{Port: p.Port.IntVal})
			}
			for _, to := range r.To {
				if to.IPBlock != nil {
					out = append(out, config.Endpoint{CIDR: to.IPBlock.CIDR, Port: p.Port.IntVal})
				}
			}
		}
	}
	return out
}

// keysOf returns the names of m.
func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
