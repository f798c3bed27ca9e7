package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement/explain"
)

// PlacementInput names a Placement.
type PlacementInput struct {
	Namespace string `json:"namespace" jsonschema:"the Placement's namespace on the hub"`
	Name      string `json:"name" jsonschema:"the Placement's name"`
}

// PlacementOutput explains a Placement's decisions.
type PlacementOutput struct {
	Placement     string               `json:"placement"`
	Namespace     string               `json:"namespace"`
	Selected      []string             `json:"selected" jsonschema:"the clusters the scheduling rules select now"`
	Decided       []string             `json:"decided" jsonschema:"the clusters of the PlacementDecisions the hub wrote"`
	Agrees        bool                 `json:"agrees" jsonschema:"selected and decided hold the same clusters"`
	Notes         []string             `json:"notes,omitempty" jsonschema:"what explains a disagreement"`
	Satisfied     Condition            `json:"satisfied"`
	Misconfigured Condition            `json:"misconfigured"`
	Clusters      []ClusterExplanation `json:"clusters" jsonschema:"each cluster looked at, why it was or was not selected"`
	Warnings      []string             `json:"warnings,omitempty" jsonschema:"what the caller may not read, and what that changes"`
	Note          string               `json:"note,omitempty" jsonschema:"what was left out, and how to narrow the query"`
}

// ClusterExplanation says why one cluster was or was not selected.
type ClusterExplanation struct {
	Cluster  string           `json:"cluster"`
	Selected bool             `json:"selected"`
	Stage    string           `json:"stage" jsonschema:"the step of the scheduling rules that decided"`
	Reason   string           `json:"reason"`
	Scores   map[string]int64 `json:"scores,omitempty"`
	Total    int64            `json:"total"`
}

func (s *server) addPlacementTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "placement_explain",
		Title:       "Placement decisions, explained",
		Description: "Explain a Placement as `kubectl ocm placement explain` does: the clusters its rules select now and those its written PlacementDecisions hold, whether they agree and why not, its Satisfied and Misconfigured conditions, and for each cluster why it was or was not selected (cluster set, predicates, taints, scores).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.placementExplain)
}

// placementExplain explains a Placement.
func (s *server) placementExplain(ctx context.Context, req *mcp.CallToolRequest, in PlacementInput) (*mcp.CallToolResult, PlacementOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out PlacementOutput
	if in.Namespace == "" || in.Name == "" {
		return nil, out, fmt.Errorf("give the Placement's namespace and name")
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	r, warnings, err := explain.Read(ctx, c, in.Namespace, in.Name)
	if err != nil {
		return nil, out, hubError("explain Placement "+in.Namespace+"/"+in.Name, err)
	}
	out = PlacementOutput{Placement: r.Placement, Namespace: r.Namespace, Selected: r.Selected, Decided: r.Decided, Agrees: r.Agrees,
		Notes: r.Notes, Satisfied: condition(r.Satisfied), Misconfigured: condition(r.Misconfigured), Warnings: warnings}
	for _, c := range r.Clusters {
		out.Clusters = append(out.Clusters, ClusterExplanation{Cluster: c.Cluster, Selected: c.Selected, Stage: c.Stage,
			Reason: truncate(c.Reason, maxText), Scores: c.Scores, Total: c.Total})
	}
	out.Clusters, out.Note = boundItems(out.Clusters, s.cfg.MaxBytes, "the selected and decided lists are complete; fleet_overview with a labelSelector shows fewer clusters",
		func(items []ClusterExplanation) int { o := out; o.Clusters = items; return jsonSize(o) + 256 })
	return nil, out, nil
}

// condition returns c with a bounded message.
func condition(c metav1.Condition) Condition {
	return conditions([]metav1.Condition{c})[0]
}
