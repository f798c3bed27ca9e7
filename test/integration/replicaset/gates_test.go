package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/require"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// rolledOutReason returns a check that PlacementRolledOut has reason and a
// message containing msg, observed at the set's generation.
func rolledOutReason(reason, msg string) func(*workv1alpha1.ManifestWorkReplicaSet) bool {
	return func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, rolledOut)
		return c != nil && c.Reason == reason && strings.Contains(c.Message, msg) && c.ObservedGeneration == m.Generation
	}
}

// waitValue waits until the work of ns/name on each cluster holds want,
// and reports it applied and available.
func (s *suite) waitValue(t *testing.T, ns, name, want string, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		s.poll(t, fmt.Sprintf("work of %s/%s on %s at %s", ns, name, c, want), func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			return err == nil && works[c] != nil && value(t, works[c]) == want, err
		})
		s.report(t, c, name, True)
	}
}

// expectValues fails t unless the works of ns/name hold want by cluster
// ("" for no work).
func (s *suite) expectValues(t *testing.T, ns, name string, want map[string]string) {
	t.Helper()
	works, err := s.works(s.ctx, ns, name)
	kit.Must(t, "list works", err)
	for c, v := range want {
		got := ""
		if works[c] != nil {
			got = value(t, works[c])
		}
		if got != v {
			t.Errorf("work of %s/%s on %s holds %q, want %q", ns, name, c, got, v)
		}
	}
}

// setTemplate writes value v into the template of ns/name.
func (s *suite) setTemplate(t *testing.T, ns, name, v string) {
	t.Helper()
	s.poll(t, "update the template of "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		set := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, set); err != nil {
			return false, err
		}
		set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap(v)}
		err := s.admin.Update(ctx, set)
		return err == nil, client.IgnoreNotFound(ignoreConflict(err))
	})
}

// ignoreConflict returns nil for a conflict: the caller tries again.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// testGates runs a ProgressivePerGroup rollout gated before and after each
// stage: nothing starts before the first approval, each stage waits for its
// gates, approvals come from kubectl ocm work rollout approve (as the admin
// and as a user holding only the shipped approver role), and the record
// names who approved. Bad approvals get clear errors and change nothing.
func (s *suite) testGates(t *testing.T) {
	const ns, name = "gates", "web"
	s.placement(t, ns, "p", group{name: "canary", clusters: []string{c1}}, group{name: "prod", clusters: []string{c2, c3}})
	set := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup}, "v1")
	set.Annotations = map[string]string{rolloutv1alpha1.GatesAnnotation: "Before,After"}
	kit.Must(t, "create", s.admin.Create(s.ctx, set))

	s.waitStatus(t, ns, name, "waiting before canary", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval before stage canary of revision 1"))
	s.expectWorks(t, ns, name)
	r := s.ocm.Run(s.ctx, "work", "rollout", "status", name, "-n", ns)
	clitest.ExpectOK(t, r, "revision 1", "gates: Before,After", "Rollout: AwaitingApproval", "canary", "Waiting", "prod", "Closed")

	// Bad input: an unknown stage, a gate the set does not have.
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns, "--stage", "nosuch")
	clitest.ExpectErr(t, r, `stage "nosuch" does not exist in the rollout of ManifestWorkReplicaSet gates/web; its stages are: placement p: canary, prod`)
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns, "--placement", "other")
	clitest.ExpectErr(t, r, "--placement other: ManifestWorkReplicaSet gates/web has no such placementRef (it has: p)")
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", "missing", "-n", ns)
	clitest.ExpectErr(t, r, "ManifestWorkReplicaSet missing not found in namespace gates")

	// An approval must name its creator.
	forged := &rolloutv1alpha1.RolloutApproval{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged"},
		Spec: rolloutv1alpha1.RolloutApprovalSpec{ManifestWorkReplicaSet: name, Revision: 1, Placement: "p", Stage: "canary",
			Gate: rolloutv1alpha1.GateBefore, Approver: "someone-else"}}
	require.ErrorContains(t, s.admin.Create(s.ctx, forged), "must name the user creating it")
	s.expectWorks(t, ns, name)

	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns, "--message", "ticket 1")
	clitest.ExpectOK(t, r, "Gate before stage canary of revision 1 (placement p) approved by")
	approvals := &rolloutv1alpha1.RolloutApprovalList{}
	kit.Must(t, "list approvals", s.admin.List(s.ctx, approvals, client.InNamespace(ns)))
	if len(approvals.Items) != 1 {
		t.Fatalf("%d RolloutApprovals in namespace %s after one approval, want 1", len(approvals.Items), ns)
	}
	clitest.ExpectFieldManager(t, &approvals.Items[0], "kubectl-ocm-work-rollout-approve/Update")
	s.waitValue(t, ns, name, "v1", c1)
	s.waitStatus(t, ns, name, "waiting after canary", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval after stage canary"))
	s.expectValues(t, ns, name, map[string]string{c2: "", c3: ""})
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns, "--stage", "canary", "--gate", "Before")
	clitest.ExpectOK(t, r, "was already approved by")

	// A user without the approver role is refused; with it, the approval
	// records that user.
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns, "--stage", "canary", "--as", "carol")
	clitest.ExpectErr(t, r, "forbidden")
	kit.Must(t, "bind carol", s.admin.Create(s.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "carol-approves"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:rollout-approver"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}},
	}))
	s.poll(t, "carol approves after canary", func(ctx context.Context) (bool, error) {
		r = s.ocm.Run(ctx, "work", "rollout", "approve", name, "-n", ns, "--stage", "canary", "--as", "carol")
		if r.Err != nil {
			t.Logf("carol's approval: %v", r.Err)
		}
		return r.Err == nil && strings.Contains(r.Out, "Gate after stage canary of revision 1 (placement p) approved by carol"), nil
	})
	s.waitStatus(t, ns, name, "waiting before prod", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval before stage prod"))
	s.expectValues(t, ns, name, map[string]string{c2: "", c3: ""})

	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns)
	clitest.ExpectOK(t, r, "Gate before stage prod of revision 1 (placement p) approved by")
	s.waitValue(t, ns, name, "v1", c2, c3)
	s.waitStatus(t, ns, name, "waiting after prod", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval after stage prod"))
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns)
	clitest.ExpectOK(t, r, "Gate after stage prod of revision 1 (placement p) approved by")
	s.waitStatus(t, ns, name, "complete", cond(rolledOut, True, workv1alpha1.ReasonComplete))
	r = s.ocm.Run(s.ctx, "work", "rollout", "status", name, "-n", ns, "-o", "yaml")
	clitest.ExpectOK(t, r, "state: Complete", "after: Approved by carol", "name: cluster3")
	r = s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns)
	clitest.ExpectErr(t, r, "the rollout of revision 1 of ManifestWorkReplicaSet gates/web waits at no gate (Complete")

	// A new revision closes every gate again; an undo too.
	s.setTemplate(t, ns, name, "v2")
	s.waitStatus(t, ns, name, "revision 2 waits before canary", rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval before stage canary of revision 2"))
	s.expectValues(t, ns, name, map[string]string{c1: "v1", c2: "v1", c3: "v1"})

	// The hub refuses a gate it does not know.
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, set))
	set.Annotations[rolloutv1alpha1.GatesAnnotation] = "Sometimes"
	assert.ErrorContains(t, s.admin.Update(s.ctx, set), "rollout.kubectl-ocm.io/gates=Sometimes: must be Before, After or Before,After")
}

// testPauseAbort pauses a Progressive rollout before a new template (it
// starts nothing), resumes it, aborts it half way (each cluster keeps what
// it has) and then aborts it with rollback (the changed clusters get the
// previous revision back, at once).
func (s *suite) testPauseAbort(t *testing.T) {
	const ns, name = "control", "app"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", progressive(1, 0, 0, "None"), "v1")))
	s.waitValue(t, ns, name, "v1", c1, c2, c3)
	s.waitStatus(t, ns, name, "complete", cond(rolledOut, True, workv1alpha1.ReasonComplete))

	r := s.ocm.Run(s.ctx, "work", "rollout", "pause", name, "-n", ns)
	clitest.ExpectOK(t, r, "ManifestWorkReplicaSet control/app paused")
	paused := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, paused))
	clitest.ExpectFieldManager(t, paused, "kubectl-ocm-work-rollout-pause/Update")
	s.setTemplate(t, ns, name, "v2")
	s.waitStatus(t, ns, name, "paused", rolledOutReason(rolloutv1alpha1.ReasonPaused, "3 clusters wait"))
	s.expectValues(t, ns, name, map[string]string{c1: "v1", c2: "v1", c3: "v1"})

	r = s.ocm.Run(s.ctx, "work", "rollout", "resume", name, "-n", ns)
	clitest.ExpectOK(t, r, "resumed")
	s.waitValue(t, ns, name, "v2", c1)
	s.poll(t, "cluster2 started", func(ctx context.Context) (bool, error) {
		works, err := s.works(ctx, ns, name)
		return err == nil && value(t, works[c2]) == "v2", err
	})
	r = s.ocm.Run(s.ctx, "work", "rollout", "abort", name, "-n", ns)
	clitest.ExpectOK(t, r, "the rollout of revision 2 is aborted; each cluster keeps what it has")
	aborted := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, aborted))
	clitest.ExpectFieldManager(t, aborted, "kubectl-ocm-work-rollout-abort/Update")
	s.report(t, c2, name, True)
	s.waitStatus(t, ns, name, "aborted", rolledOutReason(rolloutv1alpha1.ReasonAborted, "the rollout of revision 2 was aborted: 1 clusters not started"))
	s.expectValues(t, ns, name, map[string]string{c1: "v2", c2: "v2", c3: "v1"})

	r = s.ocm.Run(s.ctx, "work", "rollout", "abort", name, "-n", ns, "--rollback")
	clitest.ExpectOK(t, r, "aborted and the set rolled back to revision 1")
	// Both changed clusters go back at once, though maxConcurrency is 1:
	// the rollback waits for no success of the first.
	s.poll(t, "cluster1 and cluster2 back on v1", func(ctx context.Context) (bool, error) {
		works, err := s.works(ctx, ns, name)
		return err == nil && value(t, works[c1]) == "v1" && value(t, works[c2]) == "v1", err
	})
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1alpha1.ManifestWorkReplicaSet{}))
	s.waitStatus(t, ns, name, "at revision 3", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Annotations[revision.Annotation] == "3"
	})
}

// testFailureStrategy fails the first cluster of a new revision under
// failure strategy Rollback: the hub aborts the rollout by itself and puts
// the set back on the previous revision; no other cluster got the failing
// one.
func (s *suite) testFailureStrategy(t *testing.T) {
	const ns, name = "failure", "svc"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2, c3}})
	set := newMWRS(ns, name, "p", progressive(1, 0, 0, "None"), "v1")
	set.Annotations = map[string]string{rolloutv1alpha1.FailureStrategyAnnotation: "Rollback"}
	kit.Must(t, "create", s.admin.Create(s.ctx, set))
	s.waitValue(t, ns, name, "v1", c1, c2, c3)

	s.setTemplate(t, ns, name, "v2")
	s.poll(t, "cluster1 gets v2", func(ctx context.Context) (bool, error) {
		works, err := s.works(ctx, ns, name)
		return err == nil && value(t, works[c1]) == "v2", err
	})
	s.report(t, c1, name, False)
	got := s.waitStatus(t, ns, name, "rolled back to revision 1 (now 3)", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return m.Annotations[revision.Annotation] == "3" && m.Annotations[rolloutv1alpha1.AbortedAnnotation] == "2"
	})
	var cm struct {
		Data map[string]string `json:"data"`
	}
	kit.Must(t, "decode", json.Unmarshal(got.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw, &cm))
	if cm.Data["v"] != "v1" {
		t.Errorf("template after the rollback holds %q, want v1", cm.Data["v"])
	}
	s.waitValue(t, ns, name, "v1", c1)
	s.waitStatus(t, ns, name, "complete", cond(rolledOut, True, workv1alpha1.ReasonComplete))
	s.expectValues(t, ns, name, map[string]string{c1: "v1", c2: "v1", c3: "v1"})
}
