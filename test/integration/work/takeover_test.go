package work

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testTakeOver creates ConfigMaps on the managed cluster, then works whose
// manifests name them, one per take-over rule: Never leaves its object
// alone, IfNoDiff refuses the object that differs (naming the field) and
// takes over the one that matches, Always (no annotation) takes over and
// writes. A refused object is neither changed nor owned; once the object
// matches, IfNoDiff takes it over on the next try.
func (s *suite) testTakeOver(ctx context.Context, t *testing.T) {
	for name, value := range map[string]string{"to-never": "theirs", "to-differs": "theirs", "to-same": "1", "to-always": "theirs"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"a": value}}
		kit.MustCreate(ctx, t, s.spokeC, cm)
	}
	works := map[string]struct{ rule, object string }{
		"takeover-never":   {"Never", "to-never"},
		"takeover-differs": {"IfNoDiff", "to-differs"},
		"takeover-same":    {"IfNoDiff", "to-same"},
		"takeover-always":  {"", "to-always"},
	}
	for name, w := range works {
		work := newWork(t, name, configMap("default", w.object, "1"))
		if w.rule != "" {
			work.Annotations = map[string]string{workv1.TakeOverAnnotation: w.rule}
		}
		kit.MustCreate(ctx, t, s.hubC, work)
	}

	refused := func(work string, parts ...string) {
		t.Helper()
		var c *metav1.Condition
		framework.Eventually(ctx, t, pollTimeout, work+" refusing its object", func(ctx context.Context) (bool, error) {
			w, err := s.getWork(ctx, work)
			if err != nil {
				return false, err
			}
			c = manifestCondition(w, 0, workv1.ManifestApplied)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == workv1.ManifestAppliedReasonTakeOverRefused, nil
		})
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				t.Errorf("%s: message %q does not name %q", work, c.Message, p)
			}
		}
	}
	refused("takeover-never", "take-over rule Never", workv1.TakeOverAnnotation)
	refused("takeover-differs", "take-over rule IfNoDiff", "differs at data.a")
	for _, name := range []string{"takeover-same", "takeover-always"} {
		s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, metav1.ConditionTrue)
	}

	for object, want := range map[string]struct {
		value string
		owned bool
	}{"to-never": {"theirs", false}, "to-differs": {"theirs", false}, "to-same": {"1", true}, "to-always": {"1", true}} {
		cm, err := s.configMap(ctx, "default", object)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["a"] != want.value || (len(cm.OwnerReferences) > 0) != want.owned {
			t.Errorf("ConfigMap %s: a=%q, owners %v; want a=%q, owned %t", object, cm.Data["a"], cm.OwnerReferences, want.value, want.owned)
		}
	}

	// Once the object holds what the manifest sets, IfNoDiff takes it over.
	cm, err := s.configMap(ctx, "default", "to-differs")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "1"
	if err := s.spokeC.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	s.waitWorkCondition(ctx, t, "takeover-differs", workv1.WorkApplied, metav1.ConditionTrue)

	for name := range works {
		if err := s.hubC.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	// The works delete what they took over, and leave what they refused.
	for _, object := range []string{"to-differs", "to-same", "to-always"} {
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: object}})
	}
	for _, name := range []string{"takeover-never", "takeover-differs", "takeover-same", "takeover-always"} {
		waitGone(ctx, t, s.hubC, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}})
	}
	if _, err := s.configMap(ctx, "default", "to-never"); err != nil {
		t.Errorf("the ConfigMap a Never work refused, after the work's deletion: %v", err)
	}
}
