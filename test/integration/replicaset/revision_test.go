package replicaset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testRevisions changes a set's template twice, rolls it back with
// work rollout undo (to the previous revision, then to a numbered one) and
// checks the history: one ControllerRevision per template, the current one
// numbered highest (an undo renumbers the revision it returns to), each work
// recording its revision, and the oldest going beyond the history limit.
// Undo to a revision that is not kept names those that are.
func (s *suite) testRevisions(t *testing.T) {
	const ns, name = "revisions", "rev"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")))
	// at waits until every work holds want and the set is at revision rev,
	// with the kept revisions numbered kept.
	at := func(want string, rev int64, kept ...int64) {
		t.Helper()
		s.poll(t, fmt.Sprintf("works at %s, revision %d, revisions %v kept", want, rev, kept), func(ctx context.Context) (bool, error) {
			set := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, set); err != nil {
				return false, err
			}
			if set.Annotations[revision.Annotation] != fmt.Sprint(rev) {
				return false, nil
			}
			list := &appsv1.ControllerRevisionList{}
			if err := s.admin.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{revision.SetLabel: name}); err != nil {
				return false, err
			}
			hashes := map[int64]string{}
			for _, cr := range list.Items {
				hashes[cr.Revision] = cr.Labels[revision.HashLabel]
			}
			if len(hashes) != len(kept) {
				return false, nil
			}
			for _, n := range kept {
				if hashes[n] == "" {
					return false, nil
				}
			}
			works, err := s.works(ctx, ns, name)
			if err != nil || len(works) != 2 {
				return false, err
			}
			for _, mw := range works {
				if value(t, mw) != want || mw.Annotations[revision.HashAnnotation] != hashes[rev] {
					return false, nil
				}
			}
			return true, nil
		})
	}
	setValue := func(v string) {
		t.Helper()
		// The controller writes the set too (its revision records), so
		// an update may meet a newer version: read it again, as kubectl
		// edit would.
		kit.Must(t, "update", retry.RetryOnConflict(retry.DefaultRetry, func() error {
			set := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, set); err != nil {
				return err
			}
			set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap(v)}
			return s.admin.Update(s.ctx, set)
		}))
	}
	at("v1", 1, 1)
	setValue("v2")
	at("v2", 2, 1, 2)
	setValue("v3")
	at("v3", 3, 1, 2, 3)

	r := s.ocm.Run(s.ctx, "work", "rollout", "history", name, "-n", ns)
	clitest.ExpectOK(t, r, "REVISION", "CURRENT")
	lines := strings.Split(strings.TrimSpace(r.Out), "\n")
	if f := strings.Fields(lines[len(lines)-1]); len(lines) != 4 || len(f) < 3 || f[0] != "3" || f[len(f)-2] != "2" || f[len(f)-1] != "yes" {
		t.Errorf("history:\n%s\nwant revisions 1 to 3, revision 3 current on 2 clusters", r.Out)
	}

	r = s.ocm.Run(s.ctx, "work", "rollout", "undo", name, "-n", ns)
	clitest.ExpectOK(t, r, "rolled back from revision 3 to revision 2")
	undone := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, undone))
	clitest.ExpectFieldManager(t, undone, "kubectl-ocm-work-rollout-undo/Update")
	at("v2", 4, 1, 3, 4)
	r = s.ocm.Run(s.ctx, "work", "rollout", "undo", name, "-n", ns, "--to-revision", "1")
	clitest.ExpectOK(t, r, "rolled back from revision 4 to revision 1")
	at("v1", 5, 3, 4, 5)

	r = s.ocm.Run(s.ctx, "work", "rollout", "undo", name, "-n", ns, "--to-revision", "2")
	clitest.ExpectErr(t, r, "revision 2 of ManifestWorkReplicaSet revisions/rev is not kept (kept: 3, 4, 5)")
	r = s.ocm.Run(s.ctx, "work", "rollout", "undo", name, "-n", ns, "--to-revision", "5")
	clitest.ExpectErr(t, r, "is at revision 5 already")
	r = s.ocm.Run(s.ctx, "work", "rollout", "undo", "missing", "-n", ns)
	clitest.ExpectErr(t, r, "ManifestWorkReplicaSet missing not found in namespace revisions")

	// The hub refuses a history limit that is not a number; a limit of 1
	// keeps the current revision and one more.
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, set))
	set.Annotations[revision.HistoryLimitAnnotation] = "ten"
	assert.ErrorContains(t, s.admin.Update(s.ctx, set), "revision-history-limit=ten: must be a whole number")
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, set))
	set.Annotations[revision.HistoryLimitAnnotation] = "1"
	kit.Must(t, "update", s.admin.Update(s.ctx, set))
	setValue("v6")
	at("v6", 6, 5, 6)
}
