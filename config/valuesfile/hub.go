package valuesfile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Hub are the values of the hub chart (config/charts/hub/values.yaml), as
// `kubectl ocm hub init --values-file` reads them.
type Hub struct {
	// Images is the hub's image (--image, --image-registry).
	Images Images `json:"images,omitempty"`
	// ImagePullSecrets name the operator Pod's pull Secrets.
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
	// Pod overrides the operator's Pod; its nodeSelector, tolerations and
	// resources also place and size the hub controller.
	Pod `json:",inline"`
	// ClusterManager holds the ClusterManager's values.
	ClusterManager HubClusterManager `json:"clusterManager,omitempty"`
	// ConversionWebhookURL is --conversion-webhook-url.
	ConversionWebhookURL string `json:"conversionWebhookURL,omitempty"`
	// PodSecurity is whether namespace open-cluster-management enforces
	// restricted Pod Security.
	PodSecurity PodSecurity `json:"podSecurity,omitempty"`
}

// PodSecurity are the charts' podSecurity values.
type PodSecurity struct {
	// EnforceSharedNamespaces makes the namespace the product shares with
	// OCM's add-ons (open-cluster-management on the hub,
	// open-cluster-management-agent-addon on a managed cluster) enforce
	// restricted Pod Security, which it otherwise only warns and audits
	// at (config.HubOperatorValues and KlusterletOperatorValues
	// EnforceSharedPodSecurity).
	EnforceSharedNamespaces bool `json:"enforceSharedNamespaces,omitempty"`
}

// HubClusterManager are the hub chart's clusterManager values.
type HubClusterManager struct {
	RegistrationConfiguration struct {
		// AutoApproveUsers is --auto-approved-csr-identities.
		AutoApproveUsers []string `json:"autoApproveUsers,omitempty"`
	} `json:"registrationConfiguration,omitempty"`
	// TLSProfile is --tls-min-version and --tls-cipher-suites.
	TLSProfile TLSProfile `json:"tlsProfile,omitempty"`
	// NetworkPolicyConfiguration, when set (even to {}), is
	// --network-policy, with its two namespace flags.
	NetworkPolicyConfiguration *operatorv1.NetworkPolicyConfiguration `json:"networkPolicyConfiguration,omitempty"`
}

// TLSProfile is a chart's tlsProfile.
type TLSProfile struct {
	MinTLSVersion string   `json:"minTLSVersion,omitempty"`
	CipherSuites  []string `json:"cipherSuites,omitempty"`
}

// validate checks a tlsProfile at key.
func (p TLSProfile) validate(key string) []string {
	if _, err := config.TLSProfileFromFlags(p.MinTLSVersion, p.CipherSuites); err != nil {
		return []string{fmt.Sprintf("%s: %v", key, err)}
	}
	return nil
}

// ReadHub reads the hub chart's values from the file at path, given with
// flag, and checks that `hub init` can apply every one.
func ReadHub(flag, path string) (*Hub, error) {
	h := &Hub{}
	if err := read(flag, path, "hub", h); err != nil {
		return nil, err
	}
	problems := h.Images.validate("hub init")
	if err := config.ValidateConversionWebhookURL(h.ConversionWebhookURL); err != nil {
		problems = append(problems, fmt.Sprintf("conversionWebhookURL: %v", err))
	}
	problems = append(problems, h.ClusterManager.TLSProfile.validate("clusterManager.tlsProfile")...)
	if np := h.ClusterManager.NetworkPolicyConfiguration; np != nil {
		problems = append(problems, namespaceProblem("clusterManager.networkPolicyConfiguration.monitoringNamespace", np.MonitoringNamespace)...)
		problems = append(problems, namespaceProblem("clusterManager.networkPolicyConfiguration.apiServerNamespace", np.APIServerNamespace)...)
	}
	if len(problems) == 0 {
		if _, err := config.HubOperatorObjects(config.HubOperatorValues{OperatorPod: h.OperatorPod()}); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := refused(flag, path, problems); err != nil {
		return nil, err
	}
	return h, nil
}

// OperatorPod returns the overrides of the operator's Pod.
func (h *Hub) OperatorPod() config.OperatorPod { return h.Pod.OperatorPod(h.ImagePullSecrets) }

// namespaceProblem checks the namespace name ns of key, when set.
func namespaceProblem(key, ns string) []string {
	if msgs := validation.IsDNS1123Label(ns); ns != "" && len(msgs) > 0 {
		return []string{fmt.Sprintf("%s %q is not a namespace name (%s)", key, ns, msgs[0])}
	}
	return nil
}
