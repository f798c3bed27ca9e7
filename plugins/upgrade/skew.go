package upgrade

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// hubSkew returns what a hub controller at version hub would break of the
// skew policy: this kubectl-ocm (at version client) too far from it, and each
// managed cluster whose agent would be too old or newer, one line each.
func hubSkew(hub, client string, clusters []clusterv1.ManagedCluster) []string {
	var problems []string
	if j := version.CheckClient(client, hub); j.Verdict == version.Unsupported {
		problems = append(problems, fmt.Sprintf("kubectl-ocm %s would be %s", client, j.Reason))
	}
	for i := range clusters {
		agent := version.AgentVersion(&clusters[i])
		if j := version.CheckAgent(hub, agent); j.Verdict == version.Unsupported {
			problems = append(problems, fmt.Sprintf("the agent of managed cluster %s, at %s, would be %s", clusters[i].Name, agent, j.Reason))
		}
	}
	return problems
}

// agentSkew returns what an agent at version agent would break of the skew
// policy against the hub controller at version hub, nil when nothing.
func agentSkew(hub, agent string) []string {
	if j := version.CheckAgent(hub, agent); j.Verdict == version.Unsupported {
		return []string{fmt.Sprintf("the agent at %s would be %s", agent, j.Reason)}
	}
	return nil
}

// skewError is the refusal of an upgrade to version v that breaks the skew
// policy as problems say.
func skewError(what, v string, problems []string) error {
	return fmt.Errorf("upgrading %s to %s breaks the supported version skew (agents at most %d minor versions older than the hub controller, never newer; kubectl-ocm within %d minor version of it):\n  %s\n"+
		"Upgrade in the supported order (the hub first, then each agent, at most %d minor versions at a time), or give --force to upgrade anyway",
		what, v, version.MaxAgentMinorSkew, version.MaxClientMinorSkew, strings.Join(problems, "\n  "), version.MaxAgentMinorSkew)
}

// managedClusters lists the hub's ManagedClusters, for their agents' versions.
func managedClusters(ctx context.Context, c client.Client) ([]clusterv1.ManagedCluster, error) {
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list the ManagedClusters to check their agents' versions: %w", err)
	}
	return list.Items, nil
}

// hubControllerVersion reads the version the hub controller reports ("" when
// none) on the
// hub that --hub-kubeconfig and --hub-context select, with the kubeconfig
// file of explicitFile (the root --kubeconfig) when --hub-kubeconfig is
// unset.
func (o *Options) hubControllerVersion(ctx context.Context, explicitFile string) (string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = explicitFile
	if o.HubKubeconfig != "" {
		rules.ExplicitPath = o.HubKubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.HubContext}).ClientConfig()
	if err != nil {
		return "", fmt.Errorf("load the hub's kubeconfig (--hub-kubeconfig, --hub-context): %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return "", fmt.Errorf("create a client for the hub %s: %w", cfg.Host, err)
	}
	cm := &operatorv1.ClusterManager{}
	if err := c.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
		return "", fmt.Errorf("read ClusterManager %s on the hub %s, for the hub controller's version: %w", operatorv1.ClusterManagerName, cfg.Host, err)
	}
	return version.HubControllerVersion(cm), nil
}
