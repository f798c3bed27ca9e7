package hub

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
)

// The API the hub's admission rules need: ValidatingAdmissionPolicy (and
// its bindings) at admissionregistration.k8s.io/v1, GA in Kubernetes 1.30.
// The hub has no admission webhook server: without it, nothing on the hub
// would refuse what OCM's webhooks refuse.
const (
	admissionPolicyGroupVersion = "admissionregistration.k8s.io/v1"
	// MinHubKubernetesVersion is the oldest Kubernetes release a hub runs
	// on: the first that serves ValidatingAdmissionPolicy at v1.
	MinHubKubernetesVersion = "1.30"
)

// admissionPolicyResources are the resources of admissionPolicyGroupVersion
// the hub's manifests create.
var admissionPolicyResources = []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}

// checkAdmissionPolicyAPI returns an error naming the Kubernetes release
// the hub needs when the API server of d, at host, does not serve
// ValidatingAdmissionPolicy at admissionregistration.k8s.io/v1.
func checkAdmissionPolicyAPI(ctx context.Context, d discovery.DiscoveryInterfaceWithContext, host string) error {
	list, err := d.ServerResourcesForGroupVersionWithContext(ctx, admissionPolicyGroupVersion)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("discover the APIs of %s: %w", host, err)
	}
	served := map[string]bool{}
	if list != nil {
		for _, r := range list.APIResources {
			served[r.Name] = true
		}
	}
	for _, r := range admissionPolicyResources {
		if served[r] {
			continue
		}
		release := "an unknown release"
		if info, err := d.ServerVersionWithContext(ctx); err == nil {
			release = "Kubernetes " + info.GitVersion
		}
		return fmt.Errorf("the API server of %s (%s) does not serve %s at %s: the hub's admission rules are ValidatingAdmissionPolicies, "+
			"GA in Kubernetes %s; install the hub on a cluster of Kubernetes %s or later (or one that enables %s/%s)",
			host, release, r, admissionPolicyGroupVersion, MinHubKubernetesVersion, MinHubKubernetesVersion, admissionPolicyGroupVersion, r)
	}
	return nil
}
