package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
)

// WorksInput names the works of a cluster.
type WorksInput struct {
	Cluster string `json:"cluster" jsonschema:"the managed cluster whose ManifestWorks to list (its namespace on the hub)"`
	Name    string `json:"name,omitempty" jsonschema:"only the ManifestWork of this name"`
}

// WorksOutput lists works.
type WorksOutput struct {
	Works []WorkState `json:"works"`
	Note  string      `json:"note,omitempty" jsonschema:"what was left out, and how to narrow the query"`
}

// WorkState is one ManifestWork with the state of each manifest its agent
// reported (workreport.Manifest).
type WorkState struct {
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions,omitempty" jsonschema:"Applied, Available, Progressing, Degraded of the whole work"`
	// Payload is the state of a large payload (workreport.Payload.Summary).
	Payload   string          `json:"payload,omitempty" jsonschema:"for a work whose manifests go as a large payload: its size, its chunks and how many of them the cluster's agent has staged, such as: 50.2 MiB in 380 chunks, 212 of 380 present"`
	Manifests []ManifestState `json:"manifests,omitempty"`
}

// ManifestState is one manifest of a work on its cluster.
type ManifestState struct {
	Kind       string      `json:"kind"`
	Group      string      `json:"group,omitempty"`
	Namespace  string      `json:"namespace,omitempty"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions,omitempty"`
}

func (s *server) addWorkTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "list_works",
		Title:       "ManifestWorks of a cluster",
		Description: "List the ManifestWorks the hub delivers to one managed cluster, with their Applied, Available, Progressing and Degraded conditions, the conditions of each manifest as the cluster's agent reported them and, for a work sent as a large payload, its size and how many of its chunks the agent has staged. Name one work to see only it.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.listWorks)
}

// listWorks lists the works of a cluster.
func (s *server) listWorks(ctx context.Context, req *mcp.CallToolRequest, in WorksInput) (*mcp.CallToolResult, WorksOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out WorksOutput
	if in.Cluster == "" {
		return nil, out, fmt.Errorf("cluster is empty: name a managed cluster (fleet_overview lists them)")
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	var works []workv1.ManifestWork
	if in.Name != "" {
		w := &workv1.ManifestWork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: in.Cluster, Name: in.Name}, w); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, out, fmt.Errorf("cluster %s has no ManifestWork %q; list_works without a name lists them", in.Cluster, in.Name)
			}
			return nil, out, hubError("get ManifestWork "+in.Cluster+"/"+in.Name, err)
		}
		works = []workv1.ManifestWork{*w}
	} else {
		list := &workv1.ManifestWorkList{}
		if err := c.List(ctx, list, client.InNamespace(in.Cluster)); err != nil {
			return nil, out, hubError("list the ManifestWorks of cluster "+in.Cluster, err)
		}
		works = list.Items
	}
	for i := range works {
		w := &works[i]
		st := WorkState{Name: w.Name, Conditions: conditions(w.Status.Conditions)}
		if p := workreport.PayloadOf(w); p != nil {
			st.Payload = p.Summary()
		}
		for _, m := range w.Status.ResourceStatus.Manifests {
			r := workreport.Manifest(m)
			st.Manifests = append(st.Manifests, ManifestState{Kind: r.Kind, Group: r.Group, Namespace: r.Namespace, Name: r.Name, Conditions: conditions(r.Conditions)})
		}
		out.Works = append(out.Works, st)
	}
	out.Works, out.Note = boundItems(out.Works, s.cfg.MaxBytes, "name one work",
		func(items []WorkState) int { o := out; o.Works = items; return jsonSize(o) + 256 })
	return nil, out, nil
}
