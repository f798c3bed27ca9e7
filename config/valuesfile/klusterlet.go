package valuesfile

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
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
	// PodSecurity is whether the add-on agents' namespace enforces
	// restricted Pod Security.
	PodSecurity PodSecurity `json:"podSecurity,omitempty"`
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
	problems := k.problems("join")
	if k.BootstrapHubKubeConfig != "" {
		problems = append(problems, "bootstrapHubKubeConfig: join makes the bootstrap kubeconfig from --hub-apiserver, --hub-token and the hub's verified CA; remove it")
	}
	s := &k.Klusterlet
	switch s.Mode {
	case "", string(operatorv1.InstallModeDefault), string(operatorv1.InstallModeSingleton):
	default:
		problems = append(problems, fmt.Sprintf("klusterlet.mode %q: set Default or Singleton (--singleton); for Hosted mode use join --mode hosted", s.Mode))
	}
	if np := s.NetworkPolicyConfiguration; np != nil {
		problems = append(problems, namespaceProblem("klusterlet.networkPolicyConfiguration.monitoringNamespace", np.MonitoringNamespace)...)
	}
	problems = append(problems, k.operatorProblems(problems)...)
	if err := refused(flag, path, problems); err != nil {
		return nil, err
	}
	return k, nil
}

// ImportValuesSource names the values of a cluster's import configuration,
// Secret <cluster>/<secret> key <key>, in the errors of ParseImport.
func ImportValuesSource(cluster, secret, key string) string {
	return fmt.Sprintf("Secret %s/%s key %s", cluster, secret, key)
}

// ParseImport reads the klusterlet chart's values data, from source, that
// the hub's cluster importer installs cluster with (its renderer
// render-from-config-secret), and checks that the importer can apply every
// one. Unlike join, the values may carry the bootstrap kubeconfig (a hub
// address, proxy and credential of their own), which is checked as the
// agent reads it: embedded, no command or auth provider.
func ParseImport(source string, data []byte, cluster string) (*Klusterlet, error) {
	k := &Klusterlet{}
	if err := decode(source, data, "klusterlet", k); err != nil {
		return nil, err
	}
	problems := k.problems("the importer")
	s := &k.Klusterlet
	if s.ClusterName != "" && s.ClusterName != cluster {
		problems = append(problems, fmt.Sprintf("klusterlet.clusterName %q: the importer installs cluster %s under its own name; remove the key or set it to %s", s.ClusterName, cluster, cluster))
	}
	switch s.Mode {
	case "", string(operatorv1.InstallModeDefault), string(operatorv1.InstallModeSingleton):
	default:
		problems = append(problems, fmt.Sprintf("klusterlet.mode %q: the importer installs the agent in Default or Singleton mode; for Hosted mode use kubectl ocm join --mode hosted", s.Mode))
	}
	if s.NetworkPolicyConfiguration != nil {
		problems = append(problems, "klusterlet.networkPolicyConfiguration: the importer installs no NetworkPolicies for the agent; remove it, or join the cluster with kubectl ocm join --network-policy")
	}
	if k.BootstrapHubKubeConfig != "" {
		if _, err := BootstrapKubeconfig(k.BootstrapHubKubeConfig); err != nil {
			problems = append(problems, fmt.Sprintf("bootstrapHubKubeConfig: %v", err))
		}
	}
	problems = append(problems, k.operatorProblems(problems)...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", source, strings.Join(problems, "; "))
	}
	return k, nil
}

// BootstrapKubeconfig reads the bootstrap kubeconfig of the values as the
// agent will (kubeconfig.FromSecret: its current context, everything
// embedded, no exec plugin or auth provider), with a credential of its own.
func BootstrapKubeconfig(data string) (*kubeconfig.Info, error) {
	info, err := kubeconfig.FromSecret(map[string][]byte{kubeconfig.KubeconfigKey: []byte(data)})
	if err != nil {
		return nil, err
	}
	if info.Token == "" && len(info.CertData) == 0 {
		return nil, errors.New("its current context carries no credential: embed the bootstrap token (kubectl ocm hub token --cluster-name CLUSTER prints one)")
	}
	if u, err := url.Parse(info.Server); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("server %q is not an https URL of the hub's API server", info.Server)
	}
	return info, nil
}

// problems checks the values that join and the importer read alike; verb
// names which of them reads them.
func (k *Klusterlet) problems(verb string) []string {
	problems := k.Images.validate(verb)
	s := &k.Klusterlet
	if s.ClusterName != "" {
		if err := identity.ValidateClusterName(s.ClusterName); err != nil {
			problems = append(problems, fmt.Sprintf("klusterlet.clusterName: %v", err))
		}
	}
	if s.Namespace != "" && s.Namespace != config.AgentNamespace {
		problems = append(problems, fmt.Sprintf("klusterlet.namespace %q: %s installs the agent in namespace %s; remove the key or set it to that", s.Namespace, verb, config.AgentNamespace))
	}
	for i, u := range s.ExternalServerURLs {
		if p, err := url.Parse(u.URL); err != nil || p.Scheme != "https" || p.Host == "" {
			problems = append(problems, fmt.Sprintf("klusterlet.externalServerURLs[%d].url %q is not an https URL", i, u.URL))
		}
	}
	problems = append(problems, k.registrationProblems()...)
	problems = append(problems, s.TLSProfile.validate("klusterlet.tlsProfile")...)
	if s.WorkConfiguration.HubKubeAPIQPS < 0 || s.WorkConfiguration.HubKubeAPIBurst < 0 {
		problems = append(problems, "klusterlet.workConfiguration: hubKubeAPIQPS and hubKubeAPIBurst must not be negative")
	}
	return problems
}

// operatorProblems renders the Klusterlet operator with the values' Pod
// overrides when there are no other problems, and returns what refuses
// them.
func (k *Klusterlet) operatorProblems(others []string) []string {
	if len(others) > 0 {
		return nil
	}
	if _, err := config.KlusterletOperatorObjects(config.KlusterletOperatorValues{OperatorPod: k.OperatorPod()}); err != nil {
		return []string{err.Error()}
	}
	return nil
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

// Install sets in v and op, the agent and Klusterlet operator the hub's
// cluster importer installs, every value of k (read by ParseImport); a
// value k leaves unset keeps what v and op hold. It returns the docker
// config.json of images.imageCredentials, nil when the values create no
// pull Secret.
func (k *Klusterlet) Install(v *config.AgentValues, op *config.KlusterletOperatorValues) ([]byte, error) {
	registry := cmp.Or(k.Images.Registry, config.DefaultImageRegistry)
	switch {
	case k.Images.Tag != "":
		v.Image = k.Images.Image(registry)
	case k.Images.Registry != "":
		v.Image = config.ControllerImage(registry, version.Version)
	}
	if k.BootstrapHubKubeConfig != "" {
		info, err := BootstrapKubeconfig(k.BootstrapHubKubeConfig)
		if err != nil {
			return nil, fmt.Errorf("bootstrapHubKubeConfig: %w", err)
		}
		v.BootstrapKubeconfig, v.HubAPIServer = []byte(k.BootstrapHubKubeConfig), info.Server
	}
	s := &k.Klusterlet
	if s.Mode != "" {
		v.Mode = s.Mode
	}
	for _, u := range s.ExternalServerURLs {
		v.ExternalServerURLs = append(v.ExternalServerURLs, u.URL)
	}
	rc := &s.RegistrationConfiguration
	v.ClientCertExpirationSeconds = cmp.Or(rc.ClientCertExpirationSeconds, v.ClientCertExpirationSeconds)
	if a := rc.RegistrationDriver.AuthType; a != "" && a != operatorv1.CSRAuthType {
		// csr is the agent's default: the Klusterlet records only a change.
		v.RegistrationAuth = a
	}
	if d := rc.AddOnKubeClientRegistrationDriver; d.AuthType != "" && d.AuthType != addonv1alpha1.KubeClientDriverCSR {
		v.AddonKubeClientRegistrationAuth, v.AddonTokenExpirationSeconds = d.AuthType, d.Token.ExpirationSeconds
	}
	if p := s.TLSProfile; p.MinTLSVersion != "" || len(p.CipherSuites) > 0 {
		profile, err := config.TLSProfileFromFlags(p.MinTLSVersion, p.CipherSuites)
		if err != nil {
			return nil, fmt.Errorf("klusterlet.tlsProfile: %w", err)
		}
		v.TLSProfile = profile
	}
	w := &s.WorkConfiguration.Workers
	v.ManifestWorkWorkers = cmp.Or(w.ManifestWorks, v.ManifestWorkWorkers)
	v.AppliedWorkWorkers = cmp.Or(w.AppliedManifestWorkFinalize, v.AppliedWorkWorkers)
	k.Agent(v)
	op.OperatorPod = k.OperatorPod()
	return k.Images.PullCredentials(registry)
}
