package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/rollout"
)

// FieldManagerPrefix starts the field manager of every write the server
// makes; the tool and the caller follow.
const FieldManagerPrefix = "kubectl-ocm-mcp/"

// FieldManager is the field manager of tool's writes for caller: the hub's
// audit log and each object's managedFields say what an assistant did, and
// for whom.
func FieldManager(tool, caller string) string {
	m := FieldManagerPrefix + tool + "/" + caller
	if len(m) > metav1validation.FieldManagerMaxLength {
		m = m[:metav1validation.FieldManagerMaxLength]
	}
	return m
}

// ApproveInput opens a gate of a rollout.
type ApproveInput struct {
	SetInput
	Stage     string `json:"stage,omitempty" jsonschema:"the stage whose gate to open; empty: the gate the rollout waits at"`
	Gate      string `json:"gate,omitempty" jsonschema:"Before or After; empty: the one the rollout waits at on the stage"`
	Placement string `json:"placement,omitempty" jsonschema:"only this placementRef's stage"`
	Message   string `json:"message,omitempty" jsonschema:"recorded with the approval"`
}

// AbortInput aborts a rollout.
type AbortInput struct {
	SetInput
	Rollback bool `json:"rollback,omitempty" jsonschema:"also roll the clusters the revision reached back to the revision before"`
}

// UndoInput rolls a set back.
type UndoInput struct {
	SetInput
	ToRevision int64 `json:"toRevision,omitempty" jsonschema:"the revision to go back to (rollout_history lists them); 0: the one before the current"`
}

// ApplyWorkInput creates or updates a ManifestWork.
type ApplyWorkInput struct {
	Name      string   `json:"name" jsonschema:"the ManifestWork's name in each cluster's namespace"`
	Clusters  []string `json:"clusters" jsonschema:"the managed clusters that get the work"`
	Manifests string   `json:"manifests" jsonschema:"the manifests, YAML or JSON documents separated by ---"`
}

// WriteOutput is what a write did.
type WriteOutput struct {
	DryRun       string `json:"dryRun" jsonschema:"what the hub admitted in a server-side dry run first, which stored nothing"`
	Result       string `json:"result" jsonschema:"what was then written"`
	Caller       string `json:"caller" jsonschema:"the hub user the writes were made as"`
	FieldManager string `json:"fieldManager" jsonschema:"the field manager every write carried"`
}

func (s *server) addWriteTools(srv *mcp.Server) {
	write := func(idempotent, destructive bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{DestructiveHint: ptr.To(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr.To(false)}
	}
	const how = " The hub first admits the change in a server-side dry run, shown in the result; then it is made with the caller's identity and a field manager naming this tool and the caller."
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "rollout_approve",
		Title:       "Approve a rollout's gate",
		Description: "Open a gate of a ManifestWorkReplicaSet's rollout: the gate it waits at, or the Before or After gate of a named stage ahead of time (kubectl ocm work rollout approve). The approval records the caller as approver." + how,
		Annotations: write(true, false),
	}, s.rolloutApprove)
	for _, verb := range []string{"pause", "resume"} {
		mcp.AddTool(srv, &mcp.Tool{
			Name:        "rollout_" + verb,
			Title:       strings.ToUpper(verb[:1]) + verb[1:] + " a rollout",
			Description: map[string]string{"pause": "Pause a ManifestWorkReplicaSet's rollout: no further cluster is started; those updating go on.", "resume": "Resume a paused or aborted ManifestWorkReplicaSet's rollout."}[verb] + how,
			Annotations: write(true, false),
		}, s.rolloutVerb(verb))
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "rollout_abort",
		Title:       "Abort a rollout",
		Description: "Abort the rollout of a ManifestWorkReplicaSet's current revision: each cluster keeps what it has, or with rollback the clusters it reached go back to the revision before." + how,
		Annotations: write(true, true),
	}, s.rolloutAbort)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "rollout_undo",
		Title:       "Roll a ManifestWorkReplicaSet back",
		Description: "Roll a ManifestWorkReplicaSet back to an earlier revision (rollout_history lists them), which the hub rolls out with the set's own strategy and gates." + how,
		Annotations: write(false, true),
	}, s.rolloutUndo)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "apply_work",
		Title:       "Create or update a ManifestWork",
		Description: "Create or update ManifestWork name in each given cluster's namespace with the manifests (kubectl ocm work create --overwrite); the clusters' agents then apply them." + how,
		Annotations: write(true, true),
	}, s.applyWork)
}

// runWrite runs a verb of kubectl ocm for the caller of req: first under a
// server-side dry run, then for real, each with the field manager of tool
// and the caller.
func (s *server) runWrite(ctx context.Context, req *mcp.CallToolRequest, tool, namespace string,
	run func(ctx context.Context, getter configGetter, streams genericiooptions.IOStreams) error) (WriteOutput, error) {
	var out WriteOutput
	cfg, err := s.hubConfig(req)
	if err != nil {
		return out, err
	}
	if ctx, out.Caller, out.FieldManager, err = s.asCaller(ctx, req, tool); err != nil {
		return out, err
	}
	getter := configGetter{cfg: cfg, namespace: namespace}
	// A controller writing the same object between the read and the write
	// of a verb is a conflict: the verb reads again, up to writeAttempts.
	for attempt := 1; ; attempt++ {
		var dry, real bytes.Buffer
		err := run(cli.WithServerDryRun(ctx), getter, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &dry, ErrOut: &dry})
		if err == nil {
			out.DryRun = truncate(strings.TrimSpace(dry.String()), s.cfg.MaxBytes/3)
			if err = run(ctx, getter, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &real, ErrOut: &real}); err == nil {
				out.Result = truncate(strings.TrimSpace(real.String()), s.cfg.MaxBytes/3)
				return out, nil
			}
			if !apierrors.IsConflict(err) || attempt == writeAttempts {
				return out, hubError(tool+" after its dry run passed", err)
			}
			continue
		}
		if !apierrors.IsConflict(err) || attempt == writeAttempts {
			return out, fmt.Errorf("the hub refused %s in a server-side dry run, so nothing was written: %w", tool, err)
		}
	}
}

// writeAttempts bounds the runs of a write that meets conflicts.
const writeAttempts = 3

// asCaller asks the hub who the caller of req is and returns ctx carrying
// the field manager of tool's writes for that caller, the caller and the
// field manager.
func (s *server) asCaller(ctx context.Context, req *mcp.CallToolRequest, tool string) (context.Context, string, string, error) {
	c, err := s.hub(req)
	if err != nil {
		return ctx, "", "", err
	}
	caller, err := cli.WhoAmI(ctx, c)
	if err != nil {
		return ctx, "", "", hubError("ask the hub who the caller is (SelfSubjectReview)", err)
	}
	manager := FieldManager(tool, caller)
	return cli.WithFieldManager(ctx, manager), caller, manager, nil
}

// verb is the options of a verb of kubectl ocm: Validate, then Run.
type verb interface {
	Validate() error
	Run(ctx context.Context) error
}

// validateRun validates and runs o.
func validateRun(ctx context.Context, o verb) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

func (s *server) rolloutApprove(ctx context.Context, req *mcp.CallToolRequest, in ApproveInput) (*mcp.CallToolResult, WriteOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := needSet(in.SetInput); err != nil {
		return nil, WriteOutput{}, err
	}
	out, err := s.runWrite(ctx, req, "rollout_approve", in.Namespace, func(ctx context.Context, g configGetter, streams genericiooptions.IOStreams) error {
		o := &rollout.ApproveOptions{IOStreams: streams, Stage: in.Stage, Gate: in.Gate, Placement: in.Placement, Message: in.Message}
		o.SetTarget(g, in.Namespace, in.Name)
		return validateRun(ctx, o)
	})
	return nil, out, err
}

// rolloutVerb returns the handler of rollout_pause or rollout_resume.
func (s *server) rolloutVerb(verb string) mcp.ToolHandlerFor[SetInput, WriteOutput] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in SetInput) (*mcp.CallToolResult, WriteOutput, error) {
		ctx, cancel := s.call(ctx)
		defer cancel()
		if err := needSet(in); err != nil {
			return nil, WriteOutput{}, err
		}
		out, err := s.runWrite(ctx, req, "rollout_"+verb, in.Namespace, func(ctx context.Context, g configGetter, streams genericiooptions.IOStreams) error {
			o := rollout.NewPauseResumeAbortOptions(verb, streams)
			o.SetTarget(g, in.Namespace, in.Name)
			return validateRun(ctx, o)
		})
		return nil, out, err
	}
}

func (s *server) rolloutAbort(ctx context.Context, req *mcp.CallToolRequest, in AbortInput) (*mcp.CallToolResult, WriteOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := needSet(in.SetInput); err != nil {
		return nil, WriteOutput{}, err
	}
	out, err := s.runWrite(ctx, req, "rollout_abort", in.Namespace, func(ctx context.Context, g configGetter, streams genericiooptions.IOStreams) error {
		o := rollout.NewPauseResumeAbortOptions("abort", streams)
		o.Rollback = in.Rollback
		o.SetTarget(g, in.Namespace, in.Name)
		return validateRun(ctx, o)
	})
	return nil, out, err
}

func (s *server) rolloutUndo(ctx context.Context, req *mcp.CallToolRequest, in UndoInput) (*mcp.CallToolResult, WriteOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := needSet(in.SetInput); err != nil {
		return nil, WriteOutput{}, err
	}
	out, err := s.runWrite(ctx, req, "rollout_undo", in.Namespace, func(ctx context.Context, g configGetter, streams genericiooptions.IOStreams) error {
		o := &rollout.UndoOptions{IOStreams: streams, ToRevision: in.ToRevision}
		o.SetTarget(g, in.Namespace, in.Name)
		return validateRun(ctx, o)
	})
	return nil, out, err
}

func (s *server) applyWork(ctx context.Context, req *mcp.CallToolRequest, in ApplyWorkInput) (*mcp.CallToolResult, WriteOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if strings.TrimSpace(in.Manifests) == "" {
		return nil, WriteOutput{}, errors.New("manifests is empty: give the work's manifests as YAML")
	}
	out, err := s.runWrite(ctx, req, "apply_work", "", func(ctx context.Context, g configGetter, streams genericiooptions.IOStreams) error {
		streams.In = strings.NewReader(in.Manifests)
		o := work.NewCreateOptions(g, streams)
		o.Name, o.Clusters, o.Filenames, o.Overwrite = in.Name, in.Clusters, []string{"-"}, true
		return validateRun(ctx, o)
	})
	return nil, out, err
}
