package hub

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testHubControllerWrites holds a token of the hub controller's own
// ServiceAccount, as an attacker who took over the hub controller's process
// would, and tries to grant itself or another identity more than the hub
// controller ever grants: its RBAC allows each write, admission refuses
// them. What the hub controller really writes is shown by the rest of
// TestHubRegistration and the add-on tests, which run it as that
// ServiceAccount.
func testHubControllerWrites(ctx context.Context, t *testing.T, hubCluster *framework.Cluster) {
	cfg, err := hubCluster.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	hc := clientFor(t, cfg, err)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mallory := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}
	clusterAdmin := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
	agents := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.ClusterGroup("cluster1")}
	perCluster := identity.ClusterRBACPrefix + "evil"
	for _, tt := range []struct {
		what string
		obj  client.Object
		hint string
	}{
		{"binds cluster-admin to mallory", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "evil"}, RoleRef: clusterAdmin, Subjects: []rbacv1.Subject{mallory}},
			"named " + identity.ClusterRBACPrefix + "<cluster> only"},
		{"binds cluster-admin under a cluster's name", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: perCluster}, RoleRef: clusterAdmin, Subjects: []rbacv1.Subject{agents}},
			"may bind a cluster's own ClusterRole only"},
		{"binds a cluster's role to mallory", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: perCluster},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: perCluster}, Subjects: []rbacv1.Subject{agents, mallory}},
			"not to User mallory"},
		{"creates a ClusterRole outside the clusters' names", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "evil"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{workv1.GroupVersion.Group}, Resources: []string{"manifestworks"}, Verbs: []string{"get"}}}},
			"named " + identity.ClusterRBACPrefix + "<cluster> only"},
		{"binds admin in kube-system to mallory", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "evil"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}, Subjects: []rbacv1.Subject{mallory}},
			"not to User mallory"},
		{"binds a role in cluster1 to a ServiceAccount of kube-system", &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "evil"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: identity.ClusterRBACPrefix + "work"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "default"}}},
			"not to ServiceAccount kube-system/default"},
		{"creates a ServiceAccount in kube-system", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "evil"}},
			"not of kube-system/evil"},
	} {
		expectDenied(t, "the hub controller's token "+tt.what, hc.Create(ctx, tt.obj), tt.hint)
	}
	_, err = cs.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	expectDenied(t, "the hub controller's token mints a token of kube-system/default", err, "not of kube-system/default")
}

// testTemplatePermissions writes AddOnTemplates as a user who may write
// them but may bind only one role: a template's hub permissions and signing
// CA are rights the hub controller exercises for the template's author, so
// the author must hold each of them.
func testTemplatePermissions(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	grantUser(ctx, t, admin, "template-author", "author", rbacv1.PolicyRule{
		APIGroups: []string{addonv1alpha1.GroupVersion.Group}, Resources: []string{"addontemplates"}, Verbs: []string{"create", "update", "get"},
	})
	grantUser(ctx, t, admin, "template-author-bind", "author", rbacv1.PolicyRule{
		APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"hello-hub-role"}, Verbs: []string{"bind"},
	})
	cfg, err := hubCluster.ConfigForUser("author")
	author := clientFor(t, cfg, err)
	agent, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	template := func(name string, regs ...addonv1alpha1.RegistrationSpec) *addonv1alpha1.AddOnTemplate {
		return &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: "hello", Registration: regs,
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: agent}}}}}}}
	}
	kubeClient := func(p addonv1alpha1.HubPermissionConfig) addonv1alpha1.RegistrationSpec {
		return addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeKubeClient,
			KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{p}}}
	}
	currentCluster := func(role string) addonv1alpha1.HubPermissionConfig {
		return addonv1alpha1.HubPermissionConfig{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster,
			CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}
	}
	singleNamespace := func(ns, kind, role string) addonv1alpha1.HubPermissionConfig {
		return addonv1alpha1.HubPermissionConfig{Type: addonv1alpha1.HubPermissionsBindingSingleNamespace,
			SingleNamespace: &addonv1alpha1.SingleNamespaceBindingConfig{Namespace: ns, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}}}
	}
	framework.Eventually(ctx, t, pollTimeout, "the author's template with a role it may bind", func(ctx context.Context) (bool, error) {
		return true, author.Create(ctx, template("hello-ok", kubeClient(currentCluster("hello-hub-role"))))
	})
	for _, tt := range []struct {
		what string
		tmpl *addonv1alpha1.AddOnTemplate
		hint string
	}{
		{"binds cluster-admin in every cluster namespace", template("evil-1", kubeClient(currentCluster("cluster-admin"))), "binds ClusterRoles cluster-admin in every cluster namespace"},
		{"binds cluster-admin in kube-system", template("evil-2", kubeClient(singleNamespace("kube-system", "ClusterRole", "cluster-admin"))), "binds ClusterRole cluster-admin in namespace kube-system"},
		{"binds the role it may bind, and a Role of kube-system", template("evil-3", kubeClient(currentCluster("hello-hub-role")), kubeClient(singleNamespace("kube-system", "Role", "extension-apiserver-authentication-reader"))),
			"Role extension-apiserver-authentication-reader in namespace kube-system"},
		{"signs with a CA Secret it may not read", template("evil-4", addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeCustomSigner,
			CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/hello", SigningCA: addonv1alpha1.SigningCARef{Namespace: "kube-system", Name: "ca"}}}),
			"with the CA of Secrets kube-system/ca"},
	} {
		expectDenied(t, "the author's template "+tt.what, author.Create(ctx, tt.tmpl), tt.hint)
	}
	// Changing an admitted template's permissions is checked again.
	ok := &addonv1alpha1.AddOnTemplate{}
	if err := author.Get(ctx, client.ObjectKey{Name: "hello-ok"}, ok); err != nil {
		t.Fatal(err)
	}
	ok.Spec.Registration = append(ok.Spec.Registration, kubeClient(singleNamespace("kube-system", "ClusterRole", "cluster-admin")))
	expectDenied(t, "the author adds cluster-admin in kube-system to its template", author.Update(ctx, ok), "binds ClusterRole cluster-admin in namespace kube-system")
	_ = admin.Delete(ctx, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hello-ok"}})
}
