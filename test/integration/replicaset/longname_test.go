package replicaset

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testLongName runs a ManifestWorkReplicaSet whose <namespace>.<name> (71
// characters) cannot be a label value: its works carry the hashed owner
// label and the owner annotation, and the controller and kubectl ocm find
// them by it through create, update, a lost work and delete.
func (s *suite) testLongName(t *testing.T) {
	const ns = "long-names-namespace"
	name := "a-replica-set-with-a-name-" + strings.Repeat("x", 24)
	if n := len(ns + "." + name); n <= 63 {
		t.Fatalf("%s.%s is %d characters, want more than 63", ns, name, n)
	}
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")))

	works := s.waitWorks(t, ns, name, c1, c2)
	for c, mw := range works {
		if _, short := mw.Labels[workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey]; short {
			t.Errorf("work in %s has the %s label %q, which cannot hold %s.%s", c, workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey,
				mw.Labels[workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey], ns, name)
		}
		if got, want := mw.Labels[workv1alpha1.ManifestWorkReplicaSetOwnerKeyHashLabelKey], workv1alpha1.OwnerKeyHash(ns, name); got != want {
			t.Errorf("work in %s: %s=%q, want %q", c, workv1alpha1.ManifestWorkReplicaSetOwnerKeyHashLabelKey, got, want)
		}
		if got := mw.Annotations[workv1alpha1.ManifestWorkReplicaSetOwnerAnnotationKey]; got != ns+"/"+name {
			t.Errorf("work in %s: %s=%q, want %q", c, workv1alpha1.ManifestWorkReplicaSetOwnerAnnotationKey, got, ns+"/"+name)
		}
	}
	for _, c := range []string{c1, c2} {
		s.report(t, c, name, True)
	}
	s.waitStatus(t, ns, name, "complete", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
		return cond(applied, True, workv1alpha1.ReasonAsExpected)(m) && m.Status.Summary.Available == 2
	})
	clitest.ExpectOK(t, s.ocm.Run(s.ctx, "work", "get", "--replicaset", name, "-n", ns), c1, c2)

	// An update reaches both works.
	s.poll(t, "update the template", func(ctx context.Context) (bool, error) {
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mwrs); err != nil {
			return false, err
		}
		mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap("v2")}
		return true, s.admin.Update(ctx, mwrs)
	})
	s.waitValues(t, ns, name, map[string]string{c1: "v2", c2: "v2"})

	// A lost work brings the set back through the ManifestWork watch (the
	// owner annotation): the controller writes it again.
	kit.Must(t, "delete the work of cluster1", s.admin.Delete(s.ctx, works[c1]))
	s.poll(t, "the work of cluster1 recreated", func(ctx context.Context) (bool, error) {
		got, err := s.works(ctx, ns, name)
		return err == nil && got[c1] != nil && got[c1].UID != works[c1].UID && value(t, got[c1]) == "v2", err
	})

	// A cluster leaving the decisions loses its work.
	s.decisions(t, ns, "p", group{clusters: []string{c2}})
	s.waitWorks(t, ns, name, c2)

	// kubectl ocm deletes the set and waits for its works.
	clitest.ExpectOK(t, s.ocm.Run(s.ctx, "work", "delete", name, "-n", ns, "--replicaset", "--wait", "--timeout", "1m"), "deleted")
	s.expectWorks(t, ns, name)
	s.poll(t, "the ManifestWorkReplicaSet is gone", func(ctx context.Context) (bool, error) {
		return gone(s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1alpha1.ManifestWorkReplicaSet{}))
	})

	// A name longer than a label value by itself: its revisions are
	// labeled with a hash of it too.
	longer := strings.Repeat("long-set-name-", 7) + "end"
	kit.Must(t, "create "+longer, s.admin.Create(s.ctx, newMWRS(ns, longer, "p", clusterv1alpha1.RolloutStrategy{}, "v1")))
	s.waitValues(t, ns, longer, map[string]string{c2: "v1"})
	s.poll(t, "update "+longer, func(ctx context.Context) (bool, error) {
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: longer}, mwrs); err != nil {
			return false, err
		}
		mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap("v2")}
		return true, s.admin.Update(ctx, mwrs)
	})
	s.waitValues(t, ns, longer, map[string]string{c2: "v2"})
	revs := &appsv1.ControllerRevisionList{}
	kit.Must(t, "list revisions", s.admin.List(s.ctx, revs, client.InNamespace(ns), client.MatchingLabels{revision.SetLabel: revision.SetLabelValue(longer)}))
	if len(revs.Items) != 2 {
		t.Errorf("%d ControllerRevisions of %s, want 2", len(revs.Items), longer)
	}
	r := s.ocm.Run(s.ctx, "work", "rollout", "history", longer, "-n", ns)
	clitest.ExpectOK(t, r, "REVISION")
	if lines := strings.Split(strings.TrimSpace(r.Out), "\n"); len(lines) != 3 {
		t.Errorf("history:\n%s\nwant revisions 1 and 2", r.Out)
	}
	kit.Must(t, "delete "+longer, s.admin.Delete(s.ctx, &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: longer}}))
	s.waitWorks(t, ns, longer)
}
