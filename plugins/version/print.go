package version

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// printText writes res for people: the client version, the hub and its
// controller's version, and a table of the managed clusters' agents.
func printText(out io.Writer, res *Result) error {
	fmt.Fprintf(out, "Client Version: %s\n", res.ClientVersion)
	hub := res.Hub
	if hub == nil {
		return nil
	}
	fmt.Fprintf(out, "Hub: %s\n", hub.Server)
	if !hub.Installed {
		fmt.Fprintln(out, "Hub Controller Version: not installed (run `kubectl ocm hub init`)")
		return nil
	}
	fmt.Fprintf(out, "Hub Controller Version: %s\n", describeHub(hub))
	if len(hub.ManagedClusters) == 0 {
		fmt.Fprintln(out, "No managed clusters found.")
		return nil
	}
	fmt.Fprintln(out)
	return cli.PrintTable(out, ClustersTable(hub.ManagedClusters), false)
}

// describeHub renders the hub controller's version with what it means for
// the skew checks.
func describeHub(hub *HubVersions) string {
	v := hub.ControllerVersion
	switch _, release := pkgversion.Release(v); {
	case v == "":
		return "unknown (the ClusterManager has no " + pkgversion.ConditionHubControllerVersion +
			" condition: the hub controller is not running, or it is not kubectl-ocm's)"
	case !release:
		return v + " (a development build: version skew not checked)"
	}
	return v
}

// ClustersTable renders the agents' versions as a kubectl table: NAME,
// AVAILABLE, AGENT VERSION, KUBERNETES VERSION and SKEW (ok, unsupported
// with its reason, or "-" when not judged).
func ClustersTable(clusters []ClusterVersion) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Available", Type: "string"},
		{Name: "Agent Version", Type: "string"}, {Name: "Kubernetes Version", Type: "string"},
		{Name: "Skew", Type: "string"},
	}}
	for _, cv := range clusters {
		agent := cv.AgentVersion
		if agent == "" {
			agent = "<unknown>"
		}
		skew := "-"
		switch cv.Skew.Verdict {
		case pkgversion.Supported:
			skew = "ok"
		case pkgversion.Unsupported:
			skew = "unsupported: " + cv.Skew.Reason
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{cv.Name, cv.Available, agent, cv.KubernetesVersion, skew}})
	}
	return table
}
