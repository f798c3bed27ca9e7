package work

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/diff"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testReportDiff checks the ReportDiff apply mode and kubectl ocm work
// diff: the agent reports, per manifest, what applying it would change
// (an update, a creation) without changing anything on the cluster nor
// recording any object; the report follows the live objects; the command
// prints the diffs, lists the objects the new manifests leave out, exits
// with an error only when something differs, and deletes its works. A
// work that has not applied, or does not exist, is refused.
func (s *suite) testReportDiff(ctx context.Context, t *testing.T) {
	base := newWork(t, "diff-base", configMap("default", "diff-a", "1"), configMap("default", "diff-b", "1"))
	kit.MustCreate(ctx, t, s.hubC, base)
	s.waitWorkCondition(ctx, t, "diff-base", workv1.WorkApplied, metav1.ConditionTrue)

	dir := t.TempDir()
	write := func(name string, manifests ...string) string {
		p := filepath.Join(dir, name)
		kit.Must(t, "write "+name, os.WriteFile(p, []byte(strings.Join(manifests, "---\n")), 0o600))
		return p
	}
	changed := write("changed.yaml", configMap("default", "diff-a", "2"), configMap("default", "diff-c", "1"))
	r := s.ocm.Run(ctx, "work", "diff", "diff-base", "-f", changed, "--clusters", clusterName)
	if r.Err == nil {
		t.Fatalf("work diff of changed manifests succeeded, want exit 1:\n%s", r.Out)
	}
	for _, want := range []string{"# cluster1: 3 of 3 manifests change", "--- live/ConfigMap default/diff-a", `-  a: "1"`, `+  a: "2"`,
		"+++ applied/ConfigMap default/diff-c", "Deleted ConfigMap default/diff-b: the new manifests leave it out"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, r.Out)
		}
	}
	if !strings.Contains(r.ErrOut, "clusters reported") {
		t.Errorf("no progress while waiting:\n%s", r.ErrOut)
	}
	// Nothing changed on the cluster, and the diff's works are gone.
	if cm, err := s.configMap(ctx, "default", "diff-a"); err != nil || cm.Data["a"] != "1" {
		t.Errorf("diff-a after the diff: %v %v, want a=1", cm.Data, err)
	}
	if _, err := s.configMap(ctx, "default", "diff-c"); !apierrors.IsNotFound(err) {
		t.Errorf("diff-c after the diff: %v, want it not created", err)
	}
	// The agent releases their finalizer.
	framework.Eventually(ctx, t, pollTimeout, "the ReportDiff works gone", func(ctx context.Context) (bool, error) {
		left := &workv1.ManifestWorkList{}
		err := s.hubC.List(ctx, left, client.HasLabels{diff.OfLabel})
		return len(left.Items) == 0, err
	})

	same := write("same.yaml", configMap("default", "diff-a", "1"), configMap("default", "diff-b", "1"))
	r = s.ocm.Run(ctx, "work", "diff", "diff-base", "-f", same, "-n", clusterName)
	clitest.ExpectOK(t, r, "# cluster1: no change")

	// Bad input: a work that does not exist, one that has not applied.
	r = s.ocm.Run(ctx, "work", "diff", "nosuch", "-f", same, "--clusters", clusterName)
	clitest.ExpectErr(t, r, "ManifestWork nosuch not found in cluster cluster1")
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "diff-unapplied", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  namespace: default\nspec: {}\n"))
	s.waitWorkCondition(ctx, t, "diff-unapplied", workv1.WorkApplied, metav1.ConditionFalse)
	r = s.ocm.Run(ctx, "work", "diff", "diff-unapplied", "-f", same, "--clusters", clusterName)
	clitest.ExpectErr(t, r, "ManifestWork diff-unapplied in cluster cluster1 has not applied yet")

	// A work in ReportDiff mode for as long as it stays so: it creates
	// nothing, records nothing, and its report follows the cluster.
	ro := newWork(t, "report-only", configMap("default", "diff-r", "1"))
	ro.Annotations = map[string]string{workv1.ApplyModeAnnotation: string(workv1.ApplyModeReportDiff)}
	kit.MustCreate(ctx, t, s.hubC, ro)
	w := s.waitWorkCondition(ctx, t, "report-only", workv1.WorkDiffReported, metav1.ConditionTrue)
	if c := manifestCondition(w, 0, workv1.ManifestDiff); c == nil || c.Reason != workv1.DiffReasonWouldCreate || !strings.Contains(c.Message, `+  a: "1"`) {
		t.Errorf("Diff of a missing object = %+v, want WouldCreate with the object", c)
	}
	if c := manifestCondition(w, 0, workv1.ManifestApplied); c != nil {
		t.Errorf("a ReportDiff work reports Applied: %+v", c)
	}
	if _, err := s.configMap(ctx, "default", "diff-r"); !apierrors.IsNotFound(err) {
		t.Errorf("diff-r: %v, want it not created", err)
	}
	amw, err := s.appliedWork(ctx, "report-only")
	kit.Must(t, "read the AppliedManifestWork", err)
	if len(amw.Status.AppliedResources) != 0 {
		t.Errorf("a ReportDiff work recorded %v", amw.Status.AppliedResources)
	}
	kit.Must(t, "create diff-r", s.spokeC.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "diff-r"},
		Data: map[string]string{"a": "1"}}))
	framework.Eventually(ctx, t, pollTimeout, "the report to follow the object created on the cluster", func(ctx context.Context) (bool, error) {
		w, err := s.getWork(ctx, "report-only")
		if err != nil {
			return false, err
		}
		c := manifestCondition(w, 0, workv1.ManifestDiff)
		return c != nil && c.Reason == workv1.DiffReasonNoDiff, nil
	})

	// A Secret's report holds no value, live or new: each says its size,
	// numbered where the live and the new value differ.
	kit.Must(t, "create diff-secret", s.spokeC.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "diff-secret",
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"stringData":{"password":"live-pw-1"}}`}},
		StringData: map[string]string{"password": "live-pw-1", "user": "admin", "old": "old-token"}}))
	rs := newWork(t, "report-secret", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: diff-secret\n  namespace: default\n"+
		"stringData:\n  password: new-pw-22\n  user: admin\n  token: new-token\n")
	rs.Annotations = map[string]string{workv1.ApplyModeAnnotation: string(workv1.ApplyModeReportDiff)}
	kit.MustCreate(ctx, t, s.hubC, rs)
	w = s.waitWorkCondition(ctx, t, "report-secret", workv1.WorkDiffReported, metav1.ConditionTrue)
	c := manifestCondition(w, 0, workv1.ManifestDiff)
	if c == nil || c.Reason != workv1.DiffReasonDiffers {
		t.Fatalf("Diff of a changed Secret = %+v, want Differs", c)
	}
	for _, want := range []string{"-  password: '(withheld: 9 bytes, value 1)'", "+  password: '(withheld: 9 bytes, value 2)'",
		"   user: '(withheld: 5 bytes)'", "+  token: '(withheld: 9 bytes)'"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the Secret's diff lacks %q:\n%s", want, c.Message)
		}
	}
	for _, v := range []string{"live-pw-1", "new-pw-22", "admin", "old-token", "new-token"} {
		if strings.Contains(c.Message, v) || strings.Contains(c.Message, base64.StdEncoding.EncodeToString([]byte(v))) {
			t.Errorf("the Secret's diff holds %q:\n%s", v, c.Message)
		}
	}

	// The hub refuses an apply mode it does not know.
	bad := newWork(t, "bad-mode", configMap("default", "diff-x", "1"))
	bad.Annotations = map[string]string{workv1.ApplyModeAnnotation: "DryRun"}
	assert.ErrorContains(t, s.hubC.Create(ctx, bad), "apply-mode=DryRun: the apply mode must be Apply (the default) or ReportDiff")
}
