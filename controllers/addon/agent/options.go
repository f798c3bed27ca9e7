package agent

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/lease"
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
}

// Default fills unset options.
func (o *Options) Default() {
	if o.HubKubeconfigSecret == "" {
		o.HubKubeconfigSecret = operatorv1.HubKubeConfigSecret
	}
	if o.LeaseGraceRatio == 0 {
		o.LeaseGraceRatio = lease.DefaultGraceRatio
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
	return nil
}
