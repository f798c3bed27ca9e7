package work

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/propagation"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// testPropagation runs the hub's propagation tracker as the hub controller
// ServiceAccount next to the agent: a new work and a new generation of it
// are each measured once they are Applied, and nothing stays pending.
func (s *suite) testPropagation(ctx context.Context, t *testing.T) {
	reg := prometheus.NewRegistry()
	tracker, err := propagation.NewTracker(reg)
	if err != nil {
		t.Fatal(err)
	}
	runnable := &propagation.Runnable{Tracker: tracker}
	hubtest.RunControllers(t, s.hub, 0, func(mgr ctrl.Manager) error {
		runnable.Cache = mgr.GetCache()
		return mgr.Add(runnable)
	})
	count := func() uint64 {
		m := &dto.Metric{}
		if err := tracker.Histogram().Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	framework.Eventually(ctx, t, pollTimeout, "the tracker to have seen the works listed at start", func(context.Context) (bool, error) {
		return runnable.Synced(), nil
	})
	before := count()

	kit.MustCreate(ctx, t, s.hubC, newWork(t, "mw-propagation", configMap("default", "propagation", "v1")))
	s.waitWorkCondition(ctx, t, "mw-propagation", workv1.WorkApplied, metav1.ConditionTrue)
	framework.Eventually(ctx, t, pollTimeout, "the new work's propagation time recorded", func(context.Context) (bool, error) {
		return count() == before+1, nil
	})
	s.updateWork(ctx, t, "mw-propagation", func(w *workv1.ManifestWork) {
		w.Spec.Workload.Manifests = toManifests(t, configMap("default", "propagation", "v2"))
	})
	framework.Eventually(ctx, t, pollTimeout, "the second generation's propagation time recorded", func(ctx context.Context) (bool, error) {
		return count() == before+2, nil
	})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == propagation.PendingName && f.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("%s = %v after every change was applied", propagation.PendingName, f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	if err := s.hubC.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "mw-propagation"}}); err != nil {
		t.Fatal(err)
	}
}
