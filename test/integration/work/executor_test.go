package work

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// Executor ServiceAccount of the executor test, on cluster1.
const (
	executorNS = "default"
	executorSA = "deployer"
)

// grantConfigMaps lets the executor ServiceAccount use verbs on ConfigMaps
// in namespace, with a Role and RoleBinding on cluster1 (updated when they
// exist).
func (s *suite) grantConfigMaps(ctx context.Context, t *testing.T, namespace string, verbs ...string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "deployer-configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "deployer-configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: executorNS, Name: executorSA}},
	}
	existing := &rbacv1.Role{}
	if err := s.spokeC.Get(ctx, client.ObjectKeyFromObject(role), existing); err == nil {
		existing.Rules = role.Rules
		if err := s.spokeC.Update(ctx, existing); err != nil {
			t.Fatal(err)
		}
		return
	}
	kit.MustCreate(ctx, t, s.spokeC, role)
	kit.MustCreate(ctx, t, s.spokeC, binding)
}

// waitManifestApplied waits until manifest ordinal of work name has Applied
// status at the work's generation and returns the condition.
func (s *suite) waitManifestApplied(ctx context.Context, t *testing.T, name string, ordinal int, status metav1.ConditionStatus) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	framework.Eventually(ctx, t, pollTimeout, "manifest "+name+"/"+strconv.Itoa(ordinal)+" Applied="+string(status), func(ctx context.Context) (bool, error) {
		w, err := s.getWork(ctx, name)
		if err != nil {
			return false, err
		}
		c = manifestCondition(w, ordinal, workv1.ManifestApplied)
		return c != nil && c.Status == status && c.ObservedGeneration == w.Generation, nil
	})
	return c
}

// testExecutor applies a work as executor ServiceAccount default/deployer,
// which may write ConfigMaps in default only: the ConfigMap in kube-system
// fails alone, naming the ServiceAccount and the verbs, until the test grants
// them; removing a manifest waits for the right to delete its object.
func (s *suite) testExecutor(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.spokeC, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: executorNS, Name: executorSA}})
	s.grantConfigMaps(ctx, t, "default", "get", "create", "update", "patch")

	work := newWork(t, "executor", configMap("default", "exec-allowed", "1"), configMap("kube-system", "exec-denied", "1"))
	work.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: executorNS, Name: executorSA},
	}}
	kit.MustCreate(ctx, t, s.hubC, work)

	t.Run("allowed manifest applied, denied one fails naming the ServiceAccount and verb", func(t *testing.T) {
		s.waitManifestApplied(ctx, t, "executor", 0, metav1.ConditionTrue)
		c := s.waitManifestApplied(ctx, t, "executor", 1, metav1.ConditionFalse)
		if c.Reason != workv1.ManifestAppliedReasonFailed {
			t.Errorf("reason = %s, want %s", c.Reason, workv1.ManifestAppliedReasonFailed)
		}
		for _, part := range []string{"default/deployer", "create", "configmaps", `"exec-denied"`, "kube-system", "grant it on the managed cluster"} {
			if !strings.Contains(c.Message, part) {
				t.Errorf("message %q lacks %q", c.Message, part)
			}
		}
		if _, err := s.configMap(ctx, "default", "exec-allowed"); err != nil {
			t.Errorf("allowed ConfigMap: %v", err)
		}
		if _, err := s.configMap(ctx, "kube-system", "exec-denied"); err == nil {
			t.Error("the denied ConfigMap was created")
		}
		w := s.waitWorkCondition(ctx, t, "executor", workv1.WorkApplied, metav1.ConditionFalse)
		if !hasReason(w.Status.Conditions, workv1.WorkAppliedReasonFailed, "") {
			t.Errorf("work conditions = %+v", w.Status.Conditions)
		}
	})

	t.Run("granting the missing Role applies it", func(t *testing.T) {
		start := time.Now()
		s.grantConfigMaps(ctx, t, "kube-system", "get", "create", "update", "patch")
		s.waitManifestApplied(ctx, t, "executor", 1, metav1.ConditionTrue)
		s.waitWorkCondition(ctx, t, "executor", workv1.WorkApplied, metav1.ConditionTrue)
		if _, err := s.configMap(ctx, "kube-system", "exec-denied"); err != nil {
			t.Errorf("ConfigMap after the grant: %v", err)
		}
		t.Logf("applied %v after the grant", time.Since(start).Round(time.Millisecond))
	})

	t.Run("removed manifest is deleted only with the right to delete", func(t *testing.T) {
		s.updateWork(ctx, t, "executor", func(w *workv1.ManifestWork) {
			w.Spec.Workload.Manifests = w.Spec.Workload.Manifests[1:]
		})
		s.waitWorkCondition(ctx, t, "executor", workv1.WorkApplied, metav1.ConditionTrue)
		// The work was applied at its new generation: the removal was tried
		// and refused, so the object and its record stay.
		if _, err := s.configMap(ctx, "default", "exec-allowed"); err != nil {
			t.Errorf("ConfigMap removed without the right to delete: %v", err)
		}
		amw, err := s.appliedWork(ctx, "executor")
		if err != nil {
			t.Fatal(err)
		}
		if len(amw.Status.AppliedResources) != 2 {
			t.Errorf("applied resources = %+v, want both", amw.Status.AppliedResources)
		}
		s.grantConfigMaps(ctx, t, "default", "get", "create", "update", "patch", "delete")
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "exec-allowed"}})
	})

	t.Run("cleanup", func(t *testing.T) {
		if err := s.hubC.Delete(ctx, work); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, work)
	})
}
