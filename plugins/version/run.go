package version

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// hubTimeout bounds the questions to the hub, so that a hub that does not
// answer delays the client version by this much at most.
const hubTimeout = 20 * time.Second

// Result is what `kubectl ocm version` reports, and its -o json|yaml form.
type Result struct {
	// ClientVersion is the build identity of this kubectl-ocm.
	ClientVersion pkgversion.Info `json:"clientVersion"`
	// Hub holds what the hub reports; absent with --client or when no hub
	// answered.
	Hub *HubVersions `json:"hub,omitempty"`
	// Warnings are the problems found, also written to stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// HubVersions is what the hub reports about the versions that run there.
type HubVersions struct {
	// Server is the hub's API server URL.
	Server string `json:"server"`
	// Installed is false when the hub has no ClusterManager: kubectl-ocm (or
	// OCM) is not installed there.
	Installed bool `json:"installed"`
	// ControllerVersion is the version the running hub controller reports,
	// empty when it reports none.
	ControllerVersion string `json:"controllerVersion,omitempty"`
	// ClientSkew judges this kubectl-ocm against the hub controller.
	ClientSkew pkgversion.Judgement `json:"clientSkew"`
	// ManagedClusters lists each cluster's agent version, sorted by name.
	ManagedClusters []ClusterVersion `json:"managedClusters"`
}

// ClusterVersion is the version of one managed cluster's agent.
type ClusterVersion struct {
	// Name is the ManagedCluster's name.
	Name string `json:"name"`
	// Available is the status of its Available condition, empty when absent.
	Available string `json:"available,omitempty"`
	// AgentVersion is the version its agent reports, empty when none.
	AgentVersion string `json:"agentVersion,omitempty"`
	// KubernetesVersion is the managed cluster's Kubernetes version.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Skew judges the agent against the hub controller.
	Skew pkgversion.Judgement `json:"skew"`
}

// Run prints the versions, and the warnings on stderr.
func (o *Options) Run(ctx context.Context) error {
	res := &Result{ClientVersion: pkgversion.Get()}
	if !o.ClientOnly {
		res.Hub, res.Warnings = o.hubVersions(ctx, res.ClientVersion.Version)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, res)
	}
	return printText(o.Out, res)
}

// hubVersions asks the hub of the kubectl flags for the versions that run
// there and judges them. It returns nil when no hub answered; every problem
// is a warning, never an error: the client version is printed anyway.
func (o *Options) hubVersions(ctx context.Context, clientVersion string) (*HubVersions, []string) {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return nil, []string{fmt.Sprintf("no hub to ask for its versions (%v): showing the client version only", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	hub := &HubVersions{Server: cfg.Host, Installed: true}
	var warnings []string
	cm := &operatorv1.ClusterManager{}
	switch err := c.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); {
	case err == nil:
		hub.ControllerVersion = pkgversion.HubControllerVersion(cm)
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		hub.Installed = false
		return hub, []string{fmt.Sprintf("%s is no kubectl-ocm hub: it has no ClusterManager %s; run `kubectl ocm hub init` there, or select the hub with --context",
			cfg.Host, operatorv1.ClusterManagerName)}
	case unreachable(err):
		return nil, []string{fmt.Sprintf("cannot reach the hub at %s (%v): showing the client version only", cfg.Host, err)}
	default:
		warnings = append(warnings, fmt.Sprintf("cannot read ClusterManager %s on %s, so the hub controller's version is unknown: %v", operatorv1.ClusterManagerName, cfg.Host, err))
	}
	hub.ClientSkew = pkgversion.CheckClient(clientVersion, hub.ControllerVersion)
	if hub.ClientSkew.Verdict == pkgversion.Unsupported {
		warnings = append(warnings, fmt.Sprintf("kubectl-ocm %s is outside the supported version skew: %s; use a kubectl-ocm of the hub's minor version (kubectl krew upgrade ocm), or upgrade the hub with `kubectl ocm upgrade hub --bundle-version <version>`",
			clientVersion, hub.ClientSkew.Reason))
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return hub, append(warnings, fmt.Sprintf("cannot list ManagedClusters on %s, so the agents' versions are unknown: %v", cfg.Host, err))
	}
	hub.ManagedClusters = clusterVersions(clusters.Items, hub.ControllerVersion)
	if w := agentSkewWarning(hub.ManagedClusters, hub.ControllerVersion); w != "" {
		warnings = append(warnings, w)
	}
	return hub, warnings
}

// unreachable reports whether err is not an answer of the API server: the
// hub could not be reached, or the request timed out.
func unreachable(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// clusterVersions returns each cluster's agent version judged against the
// hub controller at hubVersion, sorted by name.
func clusterVersions(items []clusterv1.ManagedCluster, hubVersion string) []ClusterVersion {
	out := make([]ClusterVersion, 0, len(items))
	for i := range items {
		mc := &items[i]
		agent := pkgversion.AgentVersion(mc)
		cv := ClusterVersion{
			Name: mc.Name, AgentVersion: agent, KubernetesVersion: mc.Status.Version.Kubernetes,
			Skew: pkgversion.CheckAgent(hubVersion, agent),
		}
		if s := mc.AvailableStatus(); s != "" {
			cv.Available = string(s)
		}
		out = append(out, cv)
	}
	slices.SortFunc(out, func(a, b ClusterVersion) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// agentSkewWarning names the clusters whose agents are outside the supported
// skew, one a line, and how to fix them; "" when there are none.
func agentSkewWarning(clusters []ClusterVersion, hubVersion string) string {
	var outside []string
	newer := false
	for _, cv := range clusters {
		if cv.Skew.Verdict != pkgversion.Unsupported {
			continue
		}
		outside = append(outside, fmt.Sprintf("  %s: agent %s, %s", cv.Name, cv.AgentVersion, cv.Skew.Reason))
		if v, ok := pkgversion.Release(cv.AgentVersion); ok {
			if h, ok := pkgversion.Release(hubVersion); ok && v.GreaterThan(h) {
				newer = true
			}
		}
	}
	if len(outside) == 0 {
		return ""
	}
	what := "the agent of 1 managed cluster is"
	if len(outside) > 1 {
		what = fmt.Sprintf("the agents of %d managed clusters are", len(outside))
	}
	fix := fmt.Sprintf("upgrade each agent with `kubectl ocm upgrade klusterlet --bundle-version %s --context <cluster>`", hubVersion)
	if newer {
		fix += "; where an agent is newer than the hub controller, upgrade the hub first with `kubectl ocm upgrade hub`"
	}
	return fmt.Sprintf("%s outside the supported version skew (at most %d minor versions older than the hub controller, never newer):\n%s\nFix: %s",
		what, pkgversion.MaxAgentMinorSkew, strings.Join(outside, "\n"), fix)
}
