package work

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// ignoreConfigMap returns a ConfigMap manifest with data a=value, b=value.
func ignoreConfigMap(name, value string) string {
	return strings.ReplaceAll(configMap("default", name, value), "data:", "data:\n  b: \""+value+"\"")
}

// ignoreWork returns the work applying ign-present and ign-change, with
// data.a ignored OnSpokePresent and OnSpokeChange, and data.a = a.
func ignoreWork(t *testing.T, a string) *workv1.ManifestWork {
	w := newWork(t, "ignore", ignoreConfigMap("ign-present", a), ignoreConfigMap("ign-change", a))
	ssa := func(name string, c workv1.IgnoreFieldsCondition, paths ...string) workv1.ManifestConfigOption {
		return workv1.ManifestConfigOption{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "default", Name: name},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
				ServerSideApply: &workv1.ServerSideApplyConfig{Force: true, IgnoreFields: []workv1.IgnoreField{{Condition: c, JSONPaths: paths}}}},
		}
	}
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{
		ssa("ign-present", workv1.IgnoreFieldsConditionOnSpokePresent, ".data.a"),
		ssa("ign-change", workv1.IgnoreFieldsConditionOnSpokeChange, ".data.a"),
	}
	return w
}

// testIgnoreFields checks serverSideApply.ignoreFields: edits on the managed
// cluster to an ignored field stay while edits to other fields are undone;
// a manifest change to an OnSpokePresent field is not applied, to an
// OnSpokeChange field it is; an unusable path fails its manifest with reason
// AppliedManifestSSAIgnoreFieldError.
func (s *suite) testIgnoreFields(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.hubC, ignoreWork(t, "1"))
	s.waitWorkCondition(ctx, t, "ignore", workv1.WorkApplied, metav1.ConditionTrue)
	data := func(name string) map[string]string {
		t.Helper()
		cm, err := s.configMap(ctx, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}
	for _, name := range []string{"ign-present", "ign-change"} {
		if d := data(name); d["a"] != "1" || d["b"] != "1" {
			t.Fatalf("ConfigMap %s created with data %v, want a=1 b=1", name, d)
		}
	}

	t.Run("an edit of an ignored field stays, of another field is undone", func(t *testing.T) {
		for _, name := range []string{"ign-present", "ign-change"} {
			cm, err := s.configMap(ctx, "default", name)
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["a"], cm.Data["b"] = "spoke", "spoke"
			if err := s.spokeC.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"ign-present", "ign-change"} {
			framework.Eventually(ctx, t, pollTimeout, name+" data.b restored", func(ctx context.Context) (bool, error) {
				cm, err := s.configMap(ctx, "default", name)
				return err == nil && cm.Data["b"] == "1", err
			})
			if a := data(name)["a"]; a != "spoke" {
				t.Errorf("ConfigMap %s data.a = %q, want the edit \"spoke\" kept", name, a)
			}
		}
	})

	t.Run("a manifest change applies to OnSpokeChange fields, not to OnSpokePresent ones", func(t *testing.T) {
		s.updateWork(ctx, t, "ignore", func(w *workv1.ManifestWork) { w.Spec = ignoreWork(t, "2").Spec })
		s.waitWorkCondition(ctx, t, "ignore", workv1.WorkApplied, metav1.ConditionTrue)
		framework.Eventually(ctx, t, pollTimeout, "ign-change data a=2 b=2", func(ctx context.Context) (bool, error) {
			cm, err := s.configMap(ctx, "default", "ign-change")
			return err == nil && cm.Data["a"] == "2" && cm.Data["b"] == "2", err
		})
		framework.Eventually(ctx, t, pollTimeout, "ign-present data.b=2", func(ctx context.Context) (bool, error) {
			cm, err := s.configMap(ctx, "default", "ign-present")
			return err == nil && cm.Data["b"] == "2", err
		})
		if a := data("ign-present")["a"]; a != "spoke" {
			t.Errorf("ign-present data.a = %q, want \"spoke\": OnSpokePresent ignores manifest changes", a)
		}
	})

	t.Run("an unusable path fails its manifest", func(t *testing.T) {
		w := newWork(t, "ignore-bad", configMap("default", "ign-bad", "1"))
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "default", Name: "ign-bad"},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
				ServerSideApply: &workv1.ServerSideApplyConfig{IgnoreFields: []workv1.IgnoreField{{JSONPaths: []string{".data[?(@.x)]"}}}}},
		}}
		kit.MustCreate(ctx, t, s.hubC, w)
		w = s.waitWorkCondition(ctx, t, "ignore-bad", workv1.WorkApplied, metav1.ConditionFalse)
		c := manifestCondition(w, 0, workv1.ManifestApplied)
		if c == nil || c.Reason != workv1.ManifestAppliedReasonSSAIgnoreFieldError || !strings.Contains(c.Message, ".data[?(@.x)]") {
			t.Errorf("manifest Applied = %+v, want reason %s naming the path", c, workv1.ManifestAppliedReasonSSAIgnoreFieldError)
		}
	})
}
