package klusterlet

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// networkPolicy returns what the NetworkPolicies of k's agent in namespace
// allow (config.AgentNetworkPolicyOf), nil when k sets no
// networkPolicyConfiguration. The agent's egress goes to the servers and
// proxies of the kubeconfigs it holds (every bootstrap kubeconfig, its hub
// credential and, in Hosted mode, the managed cluster's kubeconfig) and to
// this cluster's API server, the kubernetes Service and its endpoints; a
// kubeconfig not written yet adds nothing until a later reconcile.
func (r *Reconciler) networkPolicy(ctx context.Context, k *operatorv1.Klusterlet, namespace string) (*config.AgentNetworkPolicy, error) {
	if k.Spec.NetworkPolicyConfiguration == nil {
		return nil, nil
	}
	secrets := append(k.BootstrapKubeconfigSecrets(), operatorv1.HubKubeConfigSecret)
	if k.Mode().IsHosted() {
		secrets = append(secrets, config.ManagedKubeconfigSecret)
	}
	var urls []string
	for _, name := range secrets {
		s := &corev1.Secret{}
		if err := r.Direct.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("read Secret %s/%s for the agent's NetworkPolicies: %w", namespace, name, err)
		}
		info, err := kubeconfig.FromSecret(s.Data)
		if err != nil || info.Server == "" {
			continue
		}
		urls = append(urls, info.Server)
		if info.ProxyURL != "" {
			urls = append(urls, info.ProxyURL)
		}
	}
	endpoints, err := r.apiServerEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	return config.AgentNetworkPolicyOf(k, urls, endpoints)
}

// apiServerEndpoints returns the addresses of this cluster's API server: the
// kubernetes Service's cluster IPs and ports, which a NetworkPolicy
// implementation may see before the Service is resolved, and its endpoints,
// which it sees after.
func (r *Reconciler) apiServerEndpoints(ctx context.Context) ([]config.Endpoint, error) {
	const namespace, name = "default", "kubernetes"
	svc := &corev1.Service{}
	if err := r.Direct.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, svc); err != nil {
		return nil, fmt.Errorf("read the Service %s/%s of the API server for the agent's NetworkPolicies: %w", namespace, name, err)
	}
	var out []config.Endpoint
	for _, ip := range svc.Spec.ClusterIPs {
		for _, p := range svc.Spec.Ports {
			if cidr := config.HostCIDR(ip); cidr != "" && p.Protocol == corev1.ProtocolTCP {
				out = append(out, config.Endpoint{CIDR: cidr, Port: p.Port})
			}
		}
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Direct.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return nil, fmt.Errorf("list the EndpointSlices of the Service %s/%s for the agent's NetworkPolicies: %w", namespace, name, err)
	}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			for _, addr := range ep.Addresses {
				for _, p := range s.Ports {
					cidr := config.HostCIDR(addr)
					if cidr == "" || p.Port == nil || (p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP) {
						continue
					}
					out = append(out, config.Endpoint{CIDR: cidr, Port: *p.Port})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the Service %s/%s has no cluster IP or endpoint (%s): the agent's NetworkPolicies could not allow its calls to the API server", namespace, name, strings.Join(svc.Spec.ClusterIPs, ","))
	}
	return out, nil
}
