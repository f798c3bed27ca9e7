package work

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testFeedbackScrapeTypes checks that both feedbackScrapeTypes are accepted
// (unset is stored as Poll) and that with either a status change on the
// managed cluster reaches the hub's statusFeedback.
func (s *suite) testFeedbackScrapeTypes(ctx context.Context, t *testing.T) {
	for _, scrape := range []workv1.FeedbackScrapeType{"", workv1.FeedbackWatchType, workv1.FeedbackPollType} {
		name := "scrape-" + strings.ToLower(string(scrape))
		if scrape == "" {
			name = "scrape-unset"
		}
		t.Run(name, func(t *testing.T) {
			work := newWork(t, name, strings.Replace(testDeployment, "name: web\n  namespace", "name: "+name+"\n  namespace", 1))
			work.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: name},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
				FeedbackScrapeType: scrape,
			}}
			kit.MustCreate(ctx, t, s.hubC, work)
			want := scrape
			if want == "" {
				want = workv1.FeedbackPollType
			}
			if got := work.Spec.ManifestConfigs[0].FeedbackScrapeType; got != want {
				t.Errorf("stored feedbackScrapeType = %q, want %q", got, want)
			}
			s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, metav1.ConditionTrue)
			d := &appsv1.Deployment{}
			if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, d); err != nil {
				t.Fatal(err)
			}
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 3}
			if err := s.spokeC.Status().Update(ctx, d); err != nil {
				t.Fatal(err)
			}
			s.waitFeedback(ctx, t, name, "ReadyReplicas", 2)
			if err := s.hubC.Delete(ctx, work); err != nil {
				t.Fatal(err)
			}
			waitGone(ctx, t, s.hubC, work)
		})
	}
}
