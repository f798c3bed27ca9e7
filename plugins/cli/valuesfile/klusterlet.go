package valuesfile

import (
	"fmt"
	"net/url"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Klusterlet are the values of the klusterlet chart
// (config/charts/klusterlet/values.yaml), as `kubectl ocm join
// --values-file` reads them.
type Klusterlet struct {
	// Images is the agent's image (--image, --image-registry).
	Images Images `json:"images,omitempty"`
	// ImagePullSecrets name the operator Pod's pull Secrets.
	ImagePullSecrets []string `json:"imagePullSecrets,omitempty"`
	// BootstrapHubKubeConfig is refused: join makes it from the hub's
	// token.
	BootstrapHubKubeConfig string `json:"bootstrapHubKubeConfig,omitempty"`
	// Klusterlet holds the Klusterlet's values.
	Klusterlet KlusterletSpec `json:"klusterlet,omitempty"`
	// Pod overrides the operator's Pod; its nodeSelector, tolerations and
	// resources, and priorityClassName, are also the agent's (the
	// Klusterlet's spec.nodePlacement, spec.resourceRequirement and
	// spec.priorityClassName).
	Pod `json:",inline"`
	// Operator overrides the operator's Pod, each value set winning over
	// Pod's.
	Operator Pod `json:"operator,omitempty"`
}

// KlusterletSpec are the klusterlet chart's klusterlet values.
type KlusterletSpec struct {
	// ClusterName is --cluster-name.
	ClusterName string `json:"clusterName,omitempty"`
	// Namespace must be the agent's namespace, open-cluster-management-agent.
	Namespace string `json:"namespace,omitempty"`
	// Mode is Default, or Singleton (--singleton).
	Mode string `json:"mode,omitempty"`
	// ExternalServerURLs is --external-server-urls.
	ExternalServerURLs []struct {
		URL string `json:"url"`
	} `json:"externalServerURLs,omitempty"`
	// NetworkPolicyConfiguration, when set (even to {}), is
	// --network-policy, with --network-policy-monitoring-namespace.
	NetworkPolicyConfiguration *struct {
		MonitoringNamespace string `json:"monitoringNamespace,omitempty"`
	} `json:"networkPolicyConfiguration,omitempty"`
	RegistrationConfiguration struct {
		// ClientCertExpirationSeconds is --client-cert-expiration-seconds.
		ClientCertExpirationSeconds int32 `json:"clientCertExpirationSeconds,omitempty"`
		RegistrationDriver          struct {
			// AuthType is --registration-auth.
			AuthType string `json:"authType,omitempty"`
		} `json:"registrationDriver,omitempty"`
		AddOnKubeClientRegistrationDriver struct {
			// AuthType is --addon-kubeclient-registration-auth.
			AuthType string `json:"authType,omitempty"`
			Token    struct {
				// ExpirationSeconds is --addon-token-expiration-seconds.
				ExpirationSeconds int64 `json:"expirationSeconds,omitempty"`
			} `json:"token,omitempty"`
		} `json:"addOnKubeClientRegistrationDriver,omitempty"`
	} `json:"registrationConfiguration,omitempty"`
	// WorkConfiguration is the Klusterlet's spec.workConfiguration: the
	// hub rate limits, which join has no flags for and passes on as they
	// are, and the workers (--manifestwork-agent-workers,
	// --appliedmanifestwork-finalize-controller-workers).
	WorkConfiguration struct {
		HubKubeAPIQPS   int32 `json:"hubKubeAPIQPS,omitempty"`
		HubKubeAPIBurst int32 `json:"hubKubeAPIBurst,omitempty"`
		Workers         struct {
			ManifestWorks               int32 `json:"manifestWorks,omitempty"`
			AppliedManifestWorkFinalize int32 `json:"appliedManifestWorkFinalize,omitempty"`
		} `json:"workers,omitempty"`
	} `json:"workConfiguration,omitempty"`
	// TLSProfile is --tls-min-version and --tls-cipher-suites.
	TLSProfile TLSProfile `json:"tlsProfile,omitempty"`
}

// ReadKlusterlet reads the klusterlet chart's values from the file at
// path, given with flag, and checks that `join` can apply every one.
func ReadKlusterlet(flag, path string) (*Klusterlet, error) {
	k := &Klusterlet{}
	if err := read(flag, path, "klusterlet", k); err != nil {
		return nil, err
	}
	problems := k.Images.validate("join")
	if k.BootstrapHubKubeConfig != "" {
		problems = append(problems, "bootstrapHubKubeConfig: join makes the bootstrap kubeconfig from --hub-apiserver, --hub-token and the hub's verified CA; remove it")
	}
	s := &k.Klusterlet
	if s.ClusterName != "" {
		if err := identity.ValidateClusterName(s.ClusterName); err != nil {
			problems = append(problems, fmt.Sprintf("klusterlet.clusterName: %v", err))
		}
	}
	if s.Namespace != "" && s.Namespace != config.AgentNamespace {
		problems = append(problems, fmt.Sprintf("klusterlet.namespace %q: join installs the agent in namespace %s; remove the key or set it to that", s.Namespace, config.AgentNamespace))
	}
	switch s.Mode {
	case "", string(operatorv1.InstallModeDefault), string(operatorv1.InstallModeSingleton):
	default:
		problems = append(problems, fmt.Sprintf("klusterlet.mode %q: set Default or Singleton (--singleton); for Hosted mode use join --mode hosted", s.Mode))
	}
	for i, u := range s.ExternalServerURLs {
		if p, err := url.Parse(u.URL); err != nil || p.Scheme != "https" || p.Host == "" {
			problems = append(problems, fmt.Sprintf("klusterlet.externalServerURLs[%d].url %q is not an https URL", i, u.URL))
		}
	}
	if np := s.NetworkPolicyConfiguration; np != nil {
		problems = append(problems, namespaceProblem("klusterlet.networkPolicyConfiguration.monitoringNamespace", np.MonitoringNamespace)...)
	}
	problems = append(problems, k.registrationProblems()...)
	problems = append(problems, s.TLSProfile.validate("klusterlet.tlsProfile")...)
	if s.WorkConfiguration.HubKubeAPIQPS < 0 || s.WorkConfiguration.HubKubeAPIBurst < 0 {
		problems = append(problems, "klusterlet.workConfiguration: hubKubeAPIQPS and hubKubeAPIBurst must not be negative")
	}
	if len(problems) == 0 {
		if _, err := config.KlusterletOperatorObjects(config.KlusterletOperatorValues{OperatorPod: k.OperatorPod()}); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := refused(flag, path, problems); err != nil {
		return nil, err
	}
	return k, nil
}

// registrationProblems checks klusterlet.registrationConfiguration.
func (k *Klusterlet) registrationProblems() []string {
	const key = "klusterlet.registrationConfiguration."
	rc := &k.Klusterlet.RegistrationConfiguration
	var problems []string
	if s := rc.ClientCertExpirationSeconds; s != 0 && s < operatorv1.MinClientCertExpirationSeconds {
		problems = append(problems, fmt.Sprintf("%sclientCertExpirationSeconds %d is below the minimum of %d", key, s, operatorv1.MinClientCertExpirationSeconds))
	}
	switch t := rc.RegistrationDriver.AuthType; t {
	case "", operatorv1.CSRAuthType, operatorv1.TokenAuthType:
	default:
		problems = append(problems, fmt.Sprintf("%sregistrationDriver.authType %q is not one of csr, token", key, t))
	}
	d := &rc.AddOnKubeClientRegistrationDriver
	switch d.AuthType {
	case "", addonv1alpha1.KubeClientDriverCSR, addonv1alpha1.KubeClientDriverToken:
	default:
		problems = append(problems, fmt.Sprintf("%saddOnKubeClientRegistrationDriver.authType %q is not one of csr, token", key, d.AuthType))
	}
	if e := d.Token.ExpirationSeconds; e != 0 {
		if d.AuthType != addonv1alpha1.KubeClientDriverToken {
			problems = append(problems, key+"addOnKubeClientRegistrationDriver.token.expirationSeconds only applies with authType token")
		} else if e < 600 {
			problems = append(problems, fmt.Sprintf("%saddOnKubeClientRegistrationDriver.token.expirationSeconds %d is below the TokenRequest minimum of 600", key, e))
		}
	}
	return problems
}

// OperatorPod returns the overrides of the Klusterlet operator's Pod: the
// top-level values, each one under operator winning.
func (k *Klusterlet) OperatorPod() config.OperatorPod {
	return k.Pod.Over(k.Operator).OperatorPod(k.ImagePullSecrets)
}

// Agent sets in v the agent's values that join has no flags for: its
// scheduling and priority class, and the work agent's limits.
func (k *Klusterlet) Agent(v *config.AgentValues) {
	v.Scheduling = k.Scheduling()
	v.PriorityClassName = k.PriorityClassName
	v.HubKubeAPIQPS = k.Klusterlet.WorkConfiguration.HubKubeAPIQPS
	v.HubKubeAPIBurst = k.Klusterlet.WorkConfiguration.HubKubeAPIBurst
}
