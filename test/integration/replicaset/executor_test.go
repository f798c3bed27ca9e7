package replicaset

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// executorName is the identity the executor ManifestWorkReplicaSets run as.
const executorName = "system:serviceaccount:app:deployer"

// withExecutor returns m with the template's executor app/deployer.
func withExecutor(m *workv1alpha1.ManifestWorkReplicaSet) *workv1alpha1.ManifestWorkReplicaSet {
	m.Spec.ManifestWorkTemplate.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: "app", Name: "deployer"},
	}}
	return m
}

// grant creates Role and RoleBinding name in ns giving user rules.
func (s *suite) grant(t *testing.T, ns, name, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	kit.Must(t, "create Role "+name, s.admin.Create(s.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}))
	kit.Must(t, "create RoleBinding "+name, s.admin.Create(s.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}))
}

// testExecutor checks ManifestWorkReplicaSets with an executor: admission
// asks their author for execute-as, the controller then creates the
// ManifestWorks with the executor, and a ManifestWork the API server refuses
// is reported on the ManifestWorkReplicaSet.
func (s *suite) testExecutor(t *testing.T) {
	const ns = "exec"
	s.placement(t, ns, "p", group{clusters: []string{"cluster7"}})
	cfg, err := s.hub.ConfigForUser("alice")
	kit.Must(t, "alice's credentials", err)
	alice, err := client.New(cfg, client.Options{Scheme: s.admin.Scheme()})
	kit.Must(t, "alice's client", err)
	s.grant(t, ns, "mwrs-editor", "alice", rbacv1.PolicyRule{APIGroups: []string{workv1.GroupVersion.Group},
		Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"get", "create", "update"}})

	t.Run("creating one needs execute-as for the executor", func(t *testing.T) {
		m := withExecutor(newMWRS(ns, "by-alice", "p", clusterv1alpha1.RolloutStrategy{}, "v1"))
		s.poll(t, "alice is denied without execute-as", func(ctx context.Context) (bool, error) {
			err := alice.Create(ctx, m.DeepCopy())
			if err == nil {
				t.Fatal("alice created a ManifestWorkReplicaSet running as " + executorName + " without execute-as")
			}
			return apierrors.IsForbidden(err) && kit.ErrorSays(err, "execute-as", executorName), nil
		})
		s.grant(t, ns, "execute-as-deployer", "alice", rbacv1.PolicyRule{APIGroups: []string{workv1.GroupVersion.Group},
			Resources: []string{"manifestworks"}, Verbs: []string{"execute-as"}, ResourceNames: []string{executorName}})
		s.poll(t, "alice creates it with execute-as", func(ctx context.Context) (bool, error) {
			err := alice.Create(ctx, m.DeepCopy())
			return err == nil, client.IgnoreAlreadyExists(ignoreForbidden(err))
		})
		works := s.waitWorks(t, ns, "by-alice", "cluster7")
		if e := works["cluster7"].Spec.Executor; e == nil || e.Subject.ServiceAccount == nil || e.Subject.ServiceAccount.Name != "deployer" {
			t.Errorf("ManifestWork executor = %+v, want app/deployer", e)
		}
		s.waitStatus(t, ns, "by-alice", "ManifestworkApplied not denied", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
			c := meta.FindStatusCondition(m.Status.Conditions, applied)
			return c != nil && c.Reason != workv1alpha1.ReasonManifestWorkDenied
		})
	})

	t.Run("changing the template of one needs execute-as too", func(t *testing.T) {
		bob, err := s.hub.ConfigForUser("bob")
		kit.Must(t, "bob's credentials", err)
		bobC, err := client.New(bob, client.Options{Scheme: s.admin.Scheme()})
		kit.Must(t, "bob's client", err)
		s.grant(t, ns, "mwrs-editor-bob", "bob", rbacv1.PolicyRule{APIGroups: []string{workv1.GroupVersion.Group},
			Resources: []string{"manifestworkreplicasets"}, Verbs: []string{"get", "update"}})
		s.poll(t, "bob may not change the manifests run as the executor", func(ctx context.Context) (bool, error) {
			m := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := bobC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "by-alice"}, m); err != nil {
				return false, ignoreForbidden(err)
			}
			m.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap("bob's")}
			err := bobC.Update(ctx, m)
			if err == nil {
				t.Fatal("bob changed the manifests of a ManifestWorkReplicaSet running as " + executorName + " without execute-as")
			}
			denied := apierrors.IsForbidden(err) && kit.ErrorSays(err, "execute-as")
			if !denied {
				t.Logf("bob's update failed otherwise, trying again: %v", err)
			}
			return denied, nil
		})
	})

	t.Run("a ManifestWork the API server refuses is reported", func(t *testing.T) {
		// A policy of the hub's administrator refusing ManifestWorks in cluster7.
		policy := &admissionv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "no-works-in-cluster7"},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
						Rule: admissionv1.Rule{APIGroups: []string{workv1.GroupVersion.Group}, APIVersions: []string{"*"},
							Resources: []string{"manifestworks"}},
					},
				}}},
				Validations: []admissionv1.Validation{{Expression: "request.namespace != 'cluster7'", Message: "cluster7 is frozen"}},
			},
		}
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-works-in-cluster7"},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
		}
		kit.Must(t, "create policy", s.admin.Create(s.ctx, policy))
		kit.Must(t, "create binding", s.admin.Create(s.ctx, binding))
		s.poll(t, "the policy is in force", func(ctx context.Context) (bool, error) {
			probe := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster7", Name: "probe"},
				Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("probe")}}}}
			err := s.admin.Create(ctx, probe, client.DryRunAll)
			return kit.ErrorSays(err, "cluster7 is frozen"), nil
		})
		kit.Must(t, "create", s.admin.Create(s.ctx, newMWRS(ns, "frozen", "p", clusterv1alpha1.RolloutStrategy{}, "v1")))
		m := s.waitStatus(t, ns, "frozen", "ManifestworkApplied False ManifestWorkDenied",
			cond(applied, False, workv1alpha1.ReasonManifestWorkDenied))
		if c := meta.FindStatusCondition(m.Status.Conditions, applied); !strings.Contains(c.Message, "cluster7/frozen") ||
			!strings.Contains(c.Message, "cluster7 is frozen") {
			t.Errorf("message %q should name the ManifestWork and the policy's reason", c.Message)
		}
		s.expectWorks(t, ns, "frozen")

		kit.Must(t, "delete binding", s.admin.Delete(s.ctx, binding))
		kit.Must(t, "delete policy", s.admin.Delete(s.ctx, policy))
		s.poll(t, "the work is created once the policy is gone", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, "frozen")
			if err != nil || len(works) == 1 {
				return len(works) == 1, err
			}
			// Nudge the controller rather than wait for its periodic retry.
			m := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "frozen"}, m); err != nil {
				return false, err
			}
			base := m.DeepCopy()
			m.Annotations = map[string]string{"nudge": metav1.Now().String()}
			return false, s.admin.Patch(ctx, m, client.MergeFrom(base))
		})
		s.waitStatus(t, ns, "frozen", "denial cleared", func(m *workv1alpha1.ManifestWorkReplicaSet) bool {
			c := meta.FindStatusCondition(m.Status.Conditions, applied)
			return c != nil && c.Reason != workv1alpha1.ReasonManifestWorkDenied
		})
	})
}

// ignoreForbidden returns nil for a Forbidden error (RBAC not yet in force).
func ignoreForbidden(err error) error {
	if apierrors.IsForbidden(err) {
		return nil
	}
	return err
}
