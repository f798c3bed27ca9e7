package work

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// escalatingRole is a Role manifest granting reads of Secrets in default.
const escalatingRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: secret-reader
  namespace: default
rules:
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list"]
`

// grant binds the executor ServiceAccount to a new Role name in default with rules.
func (s *suite) grant(ctx context.Context, t *testing.T, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	kit.MustCreate(ctx, t, s.spokeC, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Rules: rules})
	kit.MustCreate(ctx, t, s.spokeC, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: executorNS, Name: executorSA}},
	})
}

// testExecutorEscalation applies a Role as an executor that may write Roles
// but does not hold what the Role grants: the API server's escalation check,
// asked with a dry run as the executor, refuses it, and the manifest fails
// naming the escalation; once the executor holds the permissions it applies.
func (s *suite) testExecutorEscalation(ctx context.Context, t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: executorNS, Name: executorSA}}
	if err := s.spokeC.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.grant(ctx, t, "deployer-roles", rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}})

	work := newWork(t, "escalation", escalatingRole, configMap("default", "esc-cm", "1"))
	work.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: executorNS, Name: executorSA},
	}}
	kit.MustCreate(ctx, t, s.hubC, work)

	t.Run("a Role granting more than the executor holds fails alone, naming the escalation", func(t *testing.T) {
		c := s.waitManifestApplied(ctx, t, "escalation", 0, metav1.ConditionFalse)
		for _, part := range []string{"default/deployer", "escalate its privileges", `roles.rbac.authorization.k8s.io "secret-reader"`, "secrets"} {
			if !strings.Contains(c.Message, part) {
				t.Errorf("message %q lacks %q", c.Message, part)
			}
		}
		s.waitManifestApplied(ctx, t, "escalation", 1, metav1.ConditionTrue)
		if err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: "default", Name: "secret-reader"}, &rbacv1.Role{}); !apierrors.IsNotFound(err) {
			t.Errorf("the escalating Role exists: %v", err)
		}
	})

	t.Run("holding the permissions, the executor gets the Role applied", func(t *testing.T) {
		s.grant(ctx, t, "deployer-secrets", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}})
		s.waitManifestApplied(ctx, t, "escalation", 0, metav1.ConditionTrue)
		s.waitWorkCondition(ctx, t, "escalation", workv1.WorkApplied, metav1.ConditionTrue)
		if err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: "default", Name: "secret-reader"}, &rbacv1.Role{}); err != nil {
			t.Errorf("Role after the grant: %v", err)
		}
	})

	t.Run("cleanup", func(t *testing.T) {
		if err := s.hubC.Delete(ctx, work); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, work)
	})
}
