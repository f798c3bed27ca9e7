package workcli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

const (
	// workUser may create and change ManifestWorks in cluster1, and may be
	// granted execute-as during the test.
	workUser = "alice"
	// executorSA is the executor the works name, and executorName the name
	// the execute-as permission is checked for.
	executorSA   = "deployer"
	executorName = "system:serviceaccount:default:" + executorSA
)

// executorWork returns a ManifestWork in cluster1 whose executor is the
// ServiceAccount default/sa, or without an executor when sa is empty.
func executorWork(name, sa string) string {
	s := manifestWork(name, cm)
	if sa != "" {
		s += "\n  executor:\n    subject:\n      type: ServiceAccount\n      serviceAccount: {namespace: default, name: " + sa + "}"
	}
	return s
}

// TestExecutorAdmission checks the hub's execute-as policy: setting or
// changing a ManifestWork's executor needs execute-as on manifestworks named
// after the executor, and works without one are unaffected.
func TestExecutorAdmission(t *testing.T) {
	ctx, env, admin := setup(t)
	hub := env.Cluster("hub")

	// The user may write ManifestWorks in cluster1, as a hub user would.
	kit.MustCreate(ctx, t, admin, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "work-editor"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
			Verbs: []string{"get", "list", "create", "update", "patch", "delete"}}},
	})
	kit.MustCreate(ctx, t, admin, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "work-editor"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "work-editor"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: workUser}},
	})
	cfg, err := hub.ConfigForUser(workUser)
	if err != nil {
		t.Fatal(err)
	}
	user, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// The policy takes effect once the API server has loaded it.
	framework.Eventually(ctx, t, pollTimeout, "the executor admission policy", func(ctx context.Context) (bool, error) {
		err := user.Create(ctx, mustDecode(t, executorWork("probe", executorSA)))
		if err == nil {
			_ = admin.Delete(ctx, mustDecode(t, executorWork("probe", "")))
			return false, nil
		}
		if kit.ErrorSays(err, "execute-as") {
			return true, nil
		}
		return false, err
	})
	wantDenied := func(t *testing.T, err error, executor string) {
		t.Helper()
		if err == nil {
			t.Fatalf("the hub accepted executor %s; want it denied", executor)
		}
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Errorf("error is neither Forbidden nor Invalid (reason %q): %v", apierrors.ReasonForError(err), err)
		}
		for _, want := range []string{"spec.executor", `user "` + workUser + `"`, "execute-as",
			"manifestworks.work.open-cluster-management.io", `resourceNames: ["` + executor + `"]`} {
			assert.ErrorContains(t, err, want)
		}
	}

	t.Run("a work without executor is unaffected", func(t *testing.T) {
		if err := user.Create(ctx, mustDecode(t, executorWork("plain", ""))); err != nil {
			t.Fatalf("create a work without executor: %v", err)
		}
	})
	t.Run("setting an executor without execute-as is denied", func(t *testing.T) {
		wantDenied(t, user.Create(ctx, mustDecode(t, executorWork("denied", executorSA))), executorName)
		// Adding one to an existing work is a change of the executor too.
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(mustDecode(t, executorWork("plain", "")).GroupVersionKind())
		if err := user.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "plain"}, cur); err != nil {
			t.Fatal(err)
		}
		u := mustDecode(t, executorWork("plain", executorSA))
		u.SetResourceVersion(cur.GetResourceVersion())
		wantDenied(t, user.Update(ctx, u), executorName)
	})

	// execute-as for exactly that ServiceAccount, cluster-wide.
	kit.MustCreate(ctx, t, admin, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "execute-as-deployer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
			Verbs: []string{"execute-as"}, ResourceNames: []string{executorName}}},
	})
	kit.MustCreate(ctx, t, admin, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "execute-as-deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "execute-as-deployer"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: workUser}},
	})

	t.Run("the same user with execute-as for the executor is allowed", func(t *testing.T) {
		framework.Eventually(ctx, t, pollTimeout, "work with executor created once execute-as is granted", func(ctx context.Context) (bool, error) {
			err := user.Create(ctx, mustDecode(t, executorWork("allowed", executorSA)))
			return err == nil, err
		})
	})
	t.Run("execute-as for one ServiceAccount does not cover another", func(t *testing.T) {
		wantDenied(t, user.Create(ctx, mustDecode(t, executorWork("other-sa", "admin"))), "system:serviceaccount:default:admin")
	})
	t.Run("updates that keep the executor are not checked", func(t *testing.T) {
		// Another user, allowed to update works but not execute-as, changes
		// only a label of the work with an executor, as agents and the hub
		// controller change only status, labels and finalizers.
		kit.MustCreate(ctx, t, admin, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "work-editor-bob"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "work-editor"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "bob"}},
		})
		bobCfg, err := hub.ConfigForUser("bob")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := client.New(bobCfg, client.Options{Scheme: apis.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, "bob labels the work with an executor", func(ctx context.Context) (bool, error) {
			w := mustDecode(t, executorWork("allowed", ""))
			if err := bob.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return false, err
			}
			w.SetLabels(map[string]string{"touched-by": "bob"})
			err := bob.Update(ctx, w)
			return err == nil, err
		})
	})
}
