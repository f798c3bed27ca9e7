package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/diff"
)

// SetInput names a ManifestWorkReplicaSet.
type SetInput struct {
	Namespace string `json:"namespace" jsonschema:"the ManifestWorkReplicaSet's namespace on the hub"`
	Name      string `json:"name" jsonschema:"the ManifestWorkReplicaSet's name"`
}

// RolloutStatusOutput is the rollout of a set's current revision.
type RolloutStatusOutput struct {
	setstate.StatusReport
	Note string `json:"note,omitempty" jsonschema:"what was left out"`
}

// RolloutHistoryOutput lists a set's kept revisions, oldest first.
type RolloutHistoryOutput struct {
	Revisions []setstate.RevisionReport `json:"revisions"`
	Note      string                    `json:"note,omitempty" jsonschema:"what was left out"`
}

// DiffInput is a work diff.
type DiffInput struct {
	Name       string   `json:"name" jsonschema:"the ManifestWork (on each cluster) or, with replicaSet, the ManifestWorkReplicaSet to compare with"`
	Manifests  string   `json:"manifests" jsonschema:"the new manifests, YAML or JSON documents separated by ---"`
	Clusters   []string `json:"clusters,omitempty" jsonschema:"the clusters whose ManifestWork name to compare; empty: every cluster that has it"`
	ReplicaSet bool     `json:"replicaSet,omitempty" jsonschema:"compare ManifestWorkReplicaSet name of namespace on every cluster it has a work on"`
	Namespace  string   `json:"namespace,omitempty" jsonschema:"with replicaSet: the set's namespace"`
}

// DiffOutput is what the new manifests would change on each cluster.
type DiffOutput struct {
	diff.Report
	Note string `json:"note,omitempty" jsonschema:"what was left out, and how to narrow the query"`
}

func (s *server) addDeliveryTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "rollout_status",
		Title:       "Rollout of a ManifestWorkReplicaSet",
		Description: "Show where the rollout of a ManifestWorkReplicaSet's current revision stands: its state (Progressing, Complete, AwaitingApproval, Paused, Aborted), each placement's stages with their clusters and the state of each, and the Before and After gates (who approved them).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.rolloutStatus)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "rollout_history",
		Title:       "Revisions of a ManifestWorkReplicaSet",
		Description: "List the revisions the hub keeps of a ManifestWorkReplicaSet, oldest first, with when each was made, the clusters whose work was written from it, and which is current (what rollout_undo can go back to).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.rolloutHistory)
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "work_diff",
		Title: "What new manifests would change on each cluster",
		Description: "Compare new manifests with what a ManifestWork (or a ManifestWorkReplicaSet's works) delivers, on every cluster it reaches, as kubectl diff would on each: each cluster's agent compares them with the live objects and reports a unified diff per manifest. " +
			"A Secret's values are never returned, whatever --show-secret-data says: the agent reports each value's size and whether it changes, never the value. " +
			"It changes nothing on the clusters: it writes short-lived probe ManifestWorks on the hub, which ask the agents for a report only, and deletes them; the caller needs to create ManifestWorks in those cluster namespaces.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: ptr.To(false), IdempotentHint: true, OpenWorldHint: ptr.To(false)},
	}, s.workDiff)
}

// rolloutStatus reports a set's rollout.
func (s *server) rolloutStatus(ctx context.Context, req *mcp.CallToolRequest, in SetInput) (*mcp.CallToolResult, RolloutStatusOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out RolloutStatusOutput
	if err := needSet(in); err != nil {
		return nil, out, err
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	r, err := setstate.Status(ctx, c, in.Namespace, in.Name)
	if err != nil {
		return nil, out, hubError("read the rollout", err)
	}
	out.StatusReport = *r
	for i := range out.Placements {
		p := &out.Placements[i]
		for j := range p.Stages {
			st := &p.Stages[j]
			if n := len(st.Clusters); n > 50 {
				st.Clusters = st.Clusters[:50]
				out.Note = joinNotes(out.Note, fmt.Sprintf("placement %s stage %s: the first 50 of %d clusters listed (its counts are whole)", p.Name, st.Name, n))
			}
		}
	}
	return nil, out, nil
}

// rolloutHistory lists a set's revisions.
func (s *server) rolloutHistory(ctx context.Context, req *mcp.CallToolRequest, in SetInput) (*mcp.CallToolResult, RolloutHistoryOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out RolloutHistoryOutput
	if err := needSet(in); err != nil {
		return nil, out, err
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	revs, err := setstate.Revisions(ctx, c, in.Namespace, in.Name)
	if err != nil {
		return nil, out, hubError("read the revisions", err)
	}
	out.Revisions = revs
	var cut string
	out.Revisions, cut = boundItems(out.Revisions, s.cfg.MaxBytes, "the newest revisions are last; read one set at a time",
		func(items []setstate.RevisionReport) int { o := out; o.Revisions = items; return jsonSize(o) + 256 })
	out.Note = cut
	return nil, out, nil
}

// workDiff runs kubectl ocm work diff for the caller.
func (s *server) workDiff(ctx context.Context, req *mcp.CallToolRequest, in DiffInput) (*mcp.CallToolResult, DiffOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out DiffOutput
	if strings.TrimSpace(in.Manifests) == "" {
		return nil, out, errors.New("manifests is empty: give the new manifests as YAML")
	}
	if in.ReplicaSet && in.Namespace == "" {
		return nil, out, errors.New("replicaSet needs the set's namespace")
	}
	cfg, err := s.hubConfig(req)
	if err != nil {
		return nil, out, err
	}
	// The probes say who wrote them, as every write of the server does.
	if ctx, _, _, err = s.asCaller(ctx, req, "work_diff"); err != nil {
		return nil, out, err
	}
	var stdout, stderr bytes.Buffer
	o := diff.NewOptions(configGetter{cfg: cfg, namespace: in.Namespace},
		genericiooptions.IOStreams{In: strings.NewReader(in.Manifests), Out: &stdout, ErrOut: &stderr})
	o.Filenames, o.Output, o.ReplicaSet, o.Clusters = []string{"-"}, "json", in.ReplicaSet, in.Clusters
	// Leave time to delete the probes within the call.
	if deadline, ok := ctx.Deadline(); ok {
		o.Timeout = max(time.Until(deadline)*3/4, time.Second)
	}
	if !in.ReplicaSet {
		o.Namespace = ""
	}
	o.Name = in.Name
	if err := o.Validate(); err != nil {
		return nil, out, err
	}
	err = o.Run(ctx)
	if err != nil && !errors.Is(err, diff.ErrDiffers) && stdout.Len() == 0 {
		return nil, out, hubError("diff "+in.Name, err)
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &out.Report); jerr != nil {
		return nil, out, fmt.Errorf("diff %s: %w", in.Name, errors.Join(err, jerr))
	}
	if err != nil && !errors.Is(err, diff.ErrDiffers) {
		out.Note = err.Error()
	}
	for i := range out.Clusters {
		for j := range out.Clusters[i].Manifests {
			m := &out.Clusters[i].Manifests[j]
			m.Diff = truncate(m.Diff, s.cfg.MaxBytes/4)
		}
	}
	var cut string
	out.Clusters, cut = boundItems(out.Clusters, s.cfg.MaxBytes, "name fewer clusters",
		func(items []diff.ClusterDiff) int { o := out; o.Clusters = items; return jsonSize(o) + 256 })
	out.Note = joinNotes(out.Note, cut)
	return nil, out, nil
}

// needSet checks that in names a set.
func needSet(in SetInput) error {
	if in.Namespace == "" || in.Name == "" {
		return errors.New("namespace and name of the ManifestWorkReplicaSet are required")
	}
	return nil
}
