package agent

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/lease"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Options configure the add-on agent.
type Options struct {
	// Namespace is the agent's namespace on the cluster it runs on (the
	// managed cluster, or the hosting cluster in Hosted mode): the hub
	// credential Secret and the add-ons' pending requests are there.
	Namespace string
	// HubKubeconfigSecret is the hub credential Secret the registration
	// agent writes (default hub-kubeconfig-secret).
	HubKubeconfigSecret string
	// ClusterName is the managed cluster's name on the hub; empty means the
	// Secret's cluster-name.
	ClusterName string
	// ManagedCluster is the managed cluster, shared with the registration
	// and work agents (kubeconfig/managedcluster.Cluster); nil means the
	// manager's own cluster (Default mode).
	ManagedCluster cluster.Cluster
	// LeaseGraceRatio multiplies an add-on lease's duration to give the age
	// at which it is stale (default lease.DefaultGraceRatio, 1.5).
	LeaseGraceRatio float64
	// KubeClientDriver is how the add-ons' kube-apiserver credentials are
	// obtained: csr (client certificates, the default) or token
	// (ServiceAccount tokens of the hub). The agent reports it on each
	// ManagedClusterAddOn with such a registration (status.kubeClientDriver).
	KubeClientDriver string
	// TokenExpirationSeconds is the requested lifetime of the tokens of the
	// token driver (default DefaultTokenExpirationSeconds, one year, as in
	// OCM; the hub's API server may shorten it).
	TokenExpirationSeconds int64
}

// DefaultTokenExpirationSeconds is the default lifetime of an add-on's
// token: one year, as OCM's.
const DefaultTokenExpirationSeconds = 365 * 24 * 60 * 60

// minTokenExpirationSeconds is the shortest token lifetime the TokenRequest
// API accepts.
const minTokenExpirationSeconds = 600

// Default fills unset options.
func (o *Options) Default() {
	if o.HubKubeconfigSecret == "" {
		o.HubKubeconfigSecret = operatorv1.HubKubeConfigSecret
	}
	if o.LeaseGraceRatio == 0 {
		o.LeaseGraceRatio = lease.DefaultGraceRatio
	}
	if o.KubeClientDriver == "" {
		o.KubeClientDriver = addonv1alpha1.KubeClientDriverCSR
	}
	if o.TokenExpirationSeconds == 0 {
		o.TokenExpirationSeconds = DefaultTokenExpirationSeconds
	}
}

// Validate checks the options after Default.
func (o *Options) Validate() error {
	if o.Namespace == "" {
		return errors.New("the add-on agent needs its namespace (where the hub credential Secret is)")
	}
	if o.LeaseGraceRatio < 1 {
		return fmt.Errorf("--addon-lease-grace-ratio %v must be at least 1: an add-on must get one full lease duration to renew", o.LeaseGraceRatio)
	}
	if o.KubeClientDriver != addonv1alpha1.KubeClientDriverCSR && o.KubeClientDriver != addonv1alpha1.KubeClientDriverToken {
		return fmt.Errorf("--addon-kubeclient-registration-auth %q is not a driver: use %s or %s", o.KubeClientDriver, addonv1alpha1.KubeClientDriverCSR, addonv1alpha1.KubeClientDriverToken)
	}
	if o.TokenExpirationSeconds < minTokenExpirationSeconds {
		return fmt.Errorf("--addon-token-expiration-seconds %d is below the TokenRequest minimum of %d", o.TokenExpirationSeconds, minTokenExpirationSeconds)
	}
	return nil
}
