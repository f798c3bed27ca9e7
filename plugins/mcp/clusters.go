package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/ptr"
)

// Limits of the tools that read a cluster through the hub's tunnel.
const (
	// DefaultListLimit is the objects of one list when the call names none.
	DefaultListLimit = 100
	// MaxListLimit bounds the objects (and events) of one call.
	MaxListLimit = 1000
	// DefaultEventLimit is the events of one call when it names no limit.
	DefaultEventLimit = 50
	// DefaultTailLines is the lines of one log read when the call names none.
	DefaultTailLines = 100
	// MaxTailLines bounds the lines of one log read.
	MaxTailLines = 5000
)

// addClusterTools adds the tools that read a managed cluster through the
// hub's tunnel, with the caller's own hub identity: cluster_list (list.go),
// cluster_get (get.go), cluster_events (events.go) and pod_logs (logs.go);
// tunnel.go reaches the cluster and says what a failed request means.
func (s *server) addClusterTools(srv *mcp.Server) {
	through := " It reaches the cluster's API server through the hub's tunnel with the caller's own hub identity: the answer is what kubectl would give that user on that cluster, and a refusal names the RBAC that is missing there."
	annotations := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(true)}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "cluster_list",
		Title:       "List objects on a cluster",
		Description: "List the objects of one resource on a managed cluster, as the table kubectl get prints (the cluster's own columns), filtered by namespace, label and field selectors." + through,
		Annotations: annotations,
	}, s.clusterList)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "cluster_get",
		Title:       "Get an object of a cluster",
		Description: "Get one object of a managed cluster in full (kubectl get -o json, without managedFields). A Secret's values (data, stringData, the last-applied annotation) are withheld, each saying its size, unless the server was started with --show-secret-data." + through,
		Annotations: annotations,
	}, s.clusterGet)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "cluster_events",
		Title:       "Events of a cluster",
		Description: "List a managed cluster's events, newest first, in one namespace or all, optionally only those about one object (kind and name): why a Pod does not start, what a controller did." + through,
		Annotations: annotations,
	}, s.clusterEvents)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "pod_logs",
		Title:       "A Pod's log on a cluster",
		Description: "Read the last lines of a container's log on a managed cluster (kubectl logs --tail, --since, --previous)." + through,
		Annotations: annotations,
	}, s.podLogs)
}

// bounded returns v, def when v is zero, or an error naming field when v is
// negative or above max.
func bounded(field string, v, def, max int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return 0, fmt.Errorf("%s %d is outside 1..%d", field, v, max)
	}
	return v, nil
}

// objectName is namespace/name, or name without a namespace.
func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// joinNotes joins the non-empty notes.
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(notes, func(s string) bool { return s == "" }), "; ")
}
