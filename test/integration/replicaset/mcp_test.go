package replicaset

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	ocmmcp "github.com/kubectl-ocm/kubectl-ocm/plugins/mcp"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/mcptest"
)

// testMCP steers a gated rollout through the MCP server's tools: read-only
// without --allow-writes; with it, each write shows its server-side dry
// run, is made as the caller and carries a field manager naming the tool
// and the caller; a write the hub refuses in the dry run changes nothing.
func (s *suite) testMCP(t *testing.T) {
	const ns, name = "assist", "assisted"
	s.placement(t, ns, "p", group{name: "canary", clusters: []string{c1}}, group{name: "prod", clusters: []string{c2}})
	set := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup}, "v1")
	set.Annotations = map[string]string{rolloutv1alpha1.GatesAnnotation: "Before"}
	kit.Must(t, "create", s.admin.Create(s.ctx, set))
	s.waitStatus(t, ns, name, "waiting before canary", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval before stage canary of revision 1"))

	readOnly := mcptest.Connect(s.ctx, t, ocmmcp.NewServer(ocmmcp.Config{Hub: s.hub.RESTConfig()}), nil)
	writer := mcptest.Connect(s.ctx, t, ocmmcp.NewServer(ocmmcp.Config{Hub: s.hub.RESTConfig(), AllowWrites: true}), nil)
	set1 := map[string]any{"namespace": ns, "name": name}

	var status ocmmcp.RolloutStatusOutput
	mcptest.Call(s.ctx, t, readOnly, "rollout_status", set1, &status)
	if status.State != rolloutv1alpha1.ReasonAwaitingApproval || status.Revision != 1 || len(status.Placements) != 1 || len(status.Placements[0].Stages) != 2 ||
		status.Placements[0].Stages[0].Name != "canary" || status.Placements[0].Stages[0].Before != "Waiting" {
		t.Errorf("rollout_status %+v", status)
	}
	var history ocmmcp.RolloutHistoryOutput
	mcptest.Call(s.ctx, t, readOnly, "rollout_history", set1, &history)
	if len(history.Revisions) != 1 || !history.Revisions[0].Current || history.Revisions[0].Revision != 1 {
		t.Errorf("rollout_history %+v", history)
	}

	res, err := readOnly.CallTool(s.ctx, &mcp.CallToolParams{Name: "rollout_approve", Arguments: set1})
	if err == nil && !res.IsError {
		t.Fatal("rollout_approve ran on a server without --allow-writes")
	}
	approvals := func() int {
		list := &rolloutv1alpha1.RolloutApprovalList{}
		kit.Must(t, "list approvals", s.admin.List(s.ctx, list, client.InNamespace(ns)))
		return len(list.Items)
	}
	if n := approvals(); n != 0 {
		t.Fatalf("%d approvals after a refused call, want none", n)
	}

	// A stage the rollout does not have: refused in the dry run.
	msg := mcptest.CallError(s.ctx, t, writer, "rollout_approve", map[string]any{"namespace": ns, "name": name, "stage": "nosuch"})
	if !strings.Contains(msg, "the hub refused rollout_approve in a server-side dry run, so nothing was written") || !strings.Contains(msg, `stage "nosuch" does not exist`) {
		t.Errorf("approve stage nosuch: %q", msg)
	}
	if n := approvals(); n != 0 {
		t.Fatalf("%d approvals after a refused dry run, want none", n)
	}

	var approved ocmmcp.WriteOutput
	mcptest.Call(s.ctx, t, writer, "rollout_approve", map[string]any{"namespace": ns, "name": name, "message": "asked by an assistant"}, &approved)
	if !strings.Contains(approved.DryRun, "Gate before stage canary of revision 1 (placement p) approved by") ||
		!strings.Contains(approved.Result, "approved by "+approved.Caller) || approved.Caller == "" ||
		approved.FieldManager != ocmmcp.FieldManager("rollout_approve", approved.Caller) {
		t.Errorf("rollout_approve %+v", approved)
	}
	list := &rolloutv1alpha1.RolloutApprovalList{}
	kit.Must(t, "list approvals", s.admin.List(s.ctx, list, client.InNamespace(ns)))
	if len(list.Items) != 1 || list.Items[0].Spec.Approver != approved.Caller || list.Items[0].Spec.Message != "asked by an assistant" {
		t.Fatalf("approvals %+v, want one by %s", list.Items, approved.Caller)
	}
	clitest.ExpectFieldManager(t, &list.Items[0], approved.FieldManager+"/Update")
	s.waitValue(t, ns, name, "v1", c1)

	var paused ocmmcp.WriteOutput
	mcptest.Call(s.ctx, t, writer, "rollout_pause", set1, &paused)
	if !strings.Contains(paused.Result, "ManifestWorkReplicaSet assist/assisted paused") {
		t.Errorf("rollout_pause %+v", paused)
	}
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, got))
	if got.Annotations[rolloutv1alpha1.PausedAnnotation] != "true" {
		t.Errorf("annotations %v after rollout_pause", got.Annotations)
	}
	clitest.ExpectFieldManager(t, got, ocmmcp.FieldManager("rollout_pause", paused.Caller)+"/Update")
	if fm := cli.FieldManagerFrom(s.ctx); strings.HasPrefix(fm, ocmmcp.FieldManagerPrefix) {
		t.Errorf("the test's context carries %s", fm)
	}
}
