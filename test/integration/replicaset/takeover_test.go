package replicaset

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testTakeOver checks that a set's take-over rule reaches every work it
// creates, and that removing it rolls out as a template change does: every
// work loses it, the template unchanged.
func (s *suite) testTakeOver(t *testing.T) {
	const ns, name = "takeover", "takeover"
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})
	mwrs := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "v1")
	mwrs.Annotations = map[string]string{workv1.TakeOverAnnotation: string(workv1.TakeOverIfNoDiff)}
	kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))
	rules := func(want string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || len(works) != 2 {
				return false, err
			}
			for _, mw := range works {
				if got, ok := mw.Annotations[workv1.TakeOverAnnotation]; got != want || ok != (want != "") || value(t, mw) != "v1" {
					return false, nil
				}
			}
			return true, nil
		}
	}
	s.poll(t, "every work of the set with take-over rule IfNoDiff", rules(string(workv1.TakeOverIfNoDiff)))
	for _, c := range []string{c1, c2} {
		s.report(t, c, name, True)
	}
	s.waitStatus(t, ns, name, "complete", cond(rolledOut, True, workv1alpha1.ReasonComplete))

	got := &workv1alpha1.ManifestWorkReplicaSet{}
	kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, got))
	delete(got.Annotations, workv1.TakeOverAnnotation)
	kit.Must(t, "update", s.admin.Update(s.ctx, got))
	s.poll(t, "every work of the set without a take-over rule", rules(""))
}
