package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	ocmidentity "github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Defaults of the agent's settings.
const (
	// DefaultClusterHealthCheckPeriod is how often the agent reports the
	// cluster's status when nothing changes (OCM: one minute).
	DefaultClusterHealthCheckPeriod = 10 * time.Second
	// DefaultHubConnectionTimeout is how long the agent tolerates losing its
	// hub before it moves to the next one (OCM's hubConnectionTimeoutSeconds
	// default).
	DefaultHubConnectionTimeout = operatorv1.DefaultHubConnectionTimeoutSeconds * time.Second
	// PendingSecretSuffix is appended to the hub kubeconfig Secret's name to
	// name the Secret holding the private key and name of a pending
	// certificate signing request.
	PendingSecretSuffix = "-pending"
)

// Options configure the registration agent. The zero value of each optional
// field selects its default (see Default).
type Options struct {
	// ClusterName is the managed cluster's name on the hub. Empty: the
	// Klusterlet's spec.clusterName, else the hub kubeconfig Secret's
	// cluster-name.
	ClusterName string
	// AgentID distinguishes this agent's certificate identity. Empty: the hub
	// kubeconfig Secret's agent-name, else five random characters, persisted.
	AgentID string
	// Namespace is the agent's namespace on the managed cluster, holding its
	// Secrets.
	Namespace string
	// BootstrapKubeconfigSecrets name the Secrets (key kubeconfig) holding
	// bootstrap kubeconfigs, in order of preference: the first names the
	// primary hub, the others standby hubs the agent registers with when the
	// current hub is lost for HubConnectionTimeout (failover.go). Default:
	// bootstrap-hub-kubeconfig alone.
	BootstrapKubeconfigSecrets []string
	// HubConnectionTimeout is how long the current hub may be unreachable,
	// or refuse the cluster, before the agent registers with the next hub of
	// BootstrapKubeconfigSecrets; it applies only with two or more of them.
	// Default: DefaultHubConnectionTimeout.
	HubConnectionTimeout time.Duration
	// HubKubeconfigSecret names the Secret holding the hub credential.
	HubKubeconfigSecret string
	// KlusterletName names the Klusterlet the agent reports its conditions on.
	KlusterletName string
	// SpokeExternalServerURLs are the managed cluster's API server URLs that
	// the hub should use; empty: the Klusterlet's spec.externalServerURLs.
	SpokeExternalServerURLs []string
	// ClientCertExpirationSeconds is the requested lifetime of client
	// certificates, at least operatorv1.MinClientCertExpirationSeconds; 0
	// leaves it to the hub's signer.
	ClientCertExpirationSeconds int32
	// RegistrationAuth is how the agent authenticates to the hub:
	// operatorv1.CSRAuthType (client certificates, the default) or
	// operatorv1.TokenAuthType (tokens of the cluster's agent ServiceAccount
	// on the hub, which the hub hands out sealed to the key of an approved
	// request of signer certs.AgentTokenSignerName and the agent refreshes
	// through the TokenRequest API).
	RegistrationAuth string
	// ClusterHealthCheckPeriod is how often the cluster's status is reported.
	ClusterHealthCheckPeriod time.Duration
	// DisableClusterClaims turns the ClusterClaim feature off: the agent
	// neither watches ClusterClaims nor reports any claim.
	DisableClusterClaims bool
	// ManagedKubeconfigSecret names a Secret in Namespace (key kubeconfig)
	// holding the managed cluster's kubeconfig: Hosted mode, where the agent
	// runs on a hosting cluster. Empty: Default mode, the managed cluster is
	// the cluster the agent runs on.
	ManagedKubeconfigSecret string
	// ManagedCluster is the managed cluster already built by
	// kubeconfig.ManagedCluster (in Hosted mode from ManagedKubeconfigSecret)
	// and shared with the work agent, so that both use one client and one
	// cache; nil: New builds it the same way.
	ManagedCluster cluster.Cluster
}

// Default fills the empty optional fields.
func (o *Options) Default() {
	if len(o.BootstrapKubeconfigSecrets) == 0 {
		o.BootstrapKubeconfigSecrets = []string{operatorv1.BootstrapHubKubeConfigSecret}
	}
	if o.HubConnectionTimeout == 0 {
		o.HubConnectionTimeout = DefaultHubConnectionTimeout
	}
	if o.HubKubeconfigSecret == "" {
		o.HubKubeconfigSecret = operatorv1.HubKubeConfigSecret
	}
	if o.KlusterletName == "" {
		o.KlusterletName = operatorv1.KlusterletName
	}
	if o.ClusterHealthCheckPeriod <= 0 {
		o.ClusterHealthCheckPeriod = DefaultClusterHealthCheckPeriod
	}
	if o.RegistrationAuth == "" {
		o.RegistrationAuth = operatorv1.CSRAuthType
	}
}

// tokenAuth reports whether the agent registers with the token driver.
func (o *Options) tokenAuth() bool { return o.RegistrationAuth == operatorv1.TokenAuthType }

// Validate checks the options after Default.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("the agent needs its namespace: set $POD_NAMESPACE or --namespace"))
	}
	if o.ClusterName != "" {
		if err := ocmidentity.ValidateClusterName(o.ClusterName); err != nil {
			errs = append(errs, fmt.Errorf("invalid --cluster-name: %w; set the name the hub may register this cluster as (the Klusterlet's spec.clusterName)", err))
		}
	}
	if o.AgentID != "" {
		if msgs := validation.IsDNS1123Label(o.AgentID); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid --agent-id %q: %s", o.AgentID, msgs[0]))
		}
	}
	if o.ManagedKubeconfigSecret != "" {
		if msgs := validation.IsDNS1123Subdomain(o.ManagedKubeconfigSecret); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid --managed-kubeconfig-secret %q: %s", o.ManagedKubeconfigSecret, msgs[0]))
		}
		if o.ManagedKubeconfigSecret == o.HubKubeconfigSecret || slices.Contains(o.BootstrapKubeconfigSecrets, o.ManagedKubeconfigSecret) {
			errs = append(errs, fmt.Errorf("--managed-kubeconfig-secret %q must differ from the bootstrap and hub kubeconfig Secrets", o.ManagedKubeconfigSecret))
		}
	}
	for i, name := range o.BootstrapKubeconfigSecrets {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid --bootstrap-kubeconfig-secret %q: %s", name, msgs[0]))
		}
		if slices.Contains(o.BootstrapKubeconfigSecrets[:i], name) {
			errs = append(errs, fmt.Errorf("--bootstrap-kubeconfig-secret %q is named twice; name each hub's Secret once", name))
		}
		if name == o.HubKubeconfigSecret {
			errs = append(errs, fmt.Errorf("--bootstrap-kubeconfig-secret %q must differ from the hub kubeconfig Secret", name))
		}
	}
	if o.HubConnectionTimeout < 0 {
		errs = append(errs, fmt.Errorf("--hub-connection-timeout %s is negative", o.HubConnectionTimeout))
	}
	if o.RegistrationAuth != operatorv1.CSRAuthType && o.RegistrationAuth != operatorv1.TokenAuthType {
		errs = append(errs, fmt.Errorf("--registration-auth %q is not one of %s, %s", o.RegistrationAuth, operatorv1.CSRAuthType, operatorv1.TokenAuthType))
	}
	if o.ClientCertExpirationSeconds != 0 && o.ClientCertExpirationSeconds < operatorv1.MinClientCertExpirationSeconds {
		errs = append(errs, fmt.Errorf("--client-cert-expiration-seconds %d is below the minimum of %d", o.ClientCertExpirationSeconds, operatorv1.MinClientCertExpirationSeconds))
	}
	return errors.Join(errs...)
}

// multipleHubs reports whether the agent has standby hubs to move to.
func (o *Options) multipleHubs() bool { return len(o.BootstrapKubeconfigSecrets) > 1 }

// pendingSecretName names the Secret of the pending certificate request.
func (o *Options) pendingSecretName() string { return o.HubKubeconfigSecret + PendingSecretSuffix }
