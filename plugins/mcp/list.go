package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ListInput selects objects of one resource on a cluster.
type ListInput struct {
	Cluster       string `json:"cluster" jsonschema:"the managed cluster, reached through the hub with the caller's identity"`
	Resource      string `json:"resource" jsonschema:"the resource as kubectl names it: pods, deployments.apps, deploy, svc, a CRD's plural"`
	Namespace     string `json:"namespace,omitempty" jsonschema:"the namespace; empty lists every namespace of a namespaced resource"`
	LabelSelector string `json:"labelSelector,omitempty" jsonschema:"a Kubernetes label selector, such as app=hello"`
	FieldSelector string `json:"fieldSelector,omitempty" jsonschema:"a Kubernetes field selector, such as status.phase=Running"`
	Limit         int    `json:"limit,omitempty" jsonschema:"the most objects to return (default 100, at most 1000)"`
}

// ListOutput is kubectl get's table of a resource on a cluster.
type ListOutput struct {
	Cluster  string     `json:"cluster"`
	Resource string     `json:"resource" jsonschema:"the resource listed, resource.group/version"`
	Columns  []string   `json:"columns" jsonschema:"the columns kubectl get shows, from the cluster's API server"`
	Rows     []TableRow `json:"rows"`
	Note     string     `json:"note,omitempty" jsonschema:"what was left out, and how to narrow the query"`
}

// TableRow is one object of a list.
type TableRow struct {
	Namespace string   `json:"namespace,omitempty"`
	Cells     []string `json:"cells"`
}

// clusterList lists the objects of a resource on a cluster as kubectl's table.
func (s *server) clusterList(ctx context.Context, req *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := ListOutput{Cluster: in.Cluster}
	limit, err := bounded("limit", in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, out, err
	}
	cfg, err := s.clusterConfig(ctx, req, in.Cluster)
	if err != nil {
		return nil, out, err
	}
	m, err := mapping(ctx, cfg, in.Cluster, in.Resource)
	if err != nil {
		return nil, out, err
	}
	out.Resource = gvrString(m.Resource)
	rc, err := unversionedClient(cfg)
	if err != nil {
		return nil, out, err
	}
	r := rc.Get().AbsPath(resourcePath(m, in.Namespace)...).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").
		Param("limit", fmt.Sprint(limit))
	if in.LabelSelector != "" {
		r = r.Param("labelSelector", in.LabelSelector)
	}
	if in.FieldSelector != "" {
		r = r.Param("fieldSelector", in.FieldSelector)
	}
	res := r.Do(ctx)
	if err := res.Error(); err != nil {
		return nil, out, clusterError(in.Cluster, "list "+out.Resource, err)
	}
	raw, _ := res.Raw()
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil || table.Kind != "Table" {
		return nil, out, fmt.Errorf("list %s on cluster %s: the API server did not answer with a table", out.Resource, in.Cluster)
	}
	var shown []int
	for i, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			shown = append(shown, i)
			out.Columns = append(out.Columns, c.Name)
		}
	}
	for _, row := range table.Rows {
		tr := TableRow{}
		if pm := partialMeta(row.Object.Raw); pm != nil {
			tr.Namespace = pm.Namespace
		}
		for _, i := range shown {
			if i < len(row.Cells) {
				tr.Cells = append(tr.Cells, truncate(fmt.Sprint(row.Cells[i]), maxText))
			}
		}
		out.Rows = append(out.Rows, tr)
	}
	narrow := "give a namespace, a labelSelector or a fieldSelector, or a smaller limit"
	if table.Continue != "" {
		out.Note = fmt.Sprintf("the first %d objects; more exist: %s", len(out.Rows), narrow)
	}
	var cut string
	out.Rows, cut = boundItems(out.Rows, s.cfg.MaxBytes, narrow,
		func(items []TableRow) int { o := out; o.Rows = items; return jsonSize(o) + 256 })
	out.Note = joinNotes(out.Note, cut)
	return nil, out, nil
}

// partialMeta decodes the object metadata a table row carries, nil when it
// carries none.
func partialMeta(raw []byte) *metav1.ObjectMeta {
	if len(raw) == 0 {
		return nil
	}
	pm := &metav1.PartialObjectMetadata{}
	if json.Unmarshal(raw, pm) != nil {
		return nil
	}
	return &pm.ObjectMeta
}
