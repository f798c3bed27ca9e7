package addonagent

import (
	"context"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// addonNS is the test add-on's install namespace (status.namespace).
const addonNS = "helloworld-ns"

// kubeClientRegistration is the registration the hub's deploy controller
// writes for a KubeClient registration of a template: the default subject.
var kubeClientRegistration = addonv1alpha1.RegistrationConfig{
	SignerName: certificatesv1.KubeAPIServerClientSignerName,
	Subject: addonv1alpha1.Subject{
		User:   identity.AddonUserName(clusterName, "helloworld", "helloworld"),
		Groups: identity.AddonDefaultGroups(clusterName, "helloworld"),
	},
}

// testRegistration follows a registration from the ManagedClusterAddOn's
// status to an approved request, a Secret whose credential authenticates as
// the add-on, and back: removing the registration, and deleting the
// ManagedClusterAddOn, removes the Secret.
func (s *suite) testRegistration(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.spokeC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addonNS}})
	s.createAddon(ctx, t, clusterName, "helloworld", &addonv1alpha1.ManagedClusterAddOnStatus{
		Namespace: addonNS, Registrations: []addonv1alpha1.RegistrationConfig{kubeClientRegistration}})

	secret := s.waitSecret(ctx, t)
	for _, key := range []string{kubeconfig.KubeconfigKey, kubeconfig.TLSCertKey, kubeconfig.TLSKeyKey} {
		if len(secret.Data[key]) == 0 {
			t.Errorf("Secret key %s is empty", key)
		}
	}
	if string(secret.Data[kubeconfig.ClusterNameKey]) != clusterName || string(secret.Data[kubeconfig.AddonNameKey]) != "helloworld" {
		t.Errorf("cluster-name %q, addon-name %q", secret.Data[kubeconfig.ClusterNameKey], secret.Data[kubeconfig.AddonNameKey])
	}
	s.checkIdentity(ctx, t, secret)
	s.checkIsolation(ctx, t, secret)

	csrs := s.addonCSRs(ctx, t, "helloworld")
	if len(csrs) != 1 {
		t.Fatalf("%d requests of the add-on, want 1", len(csrs))
	}
	csr := csrs[0]
	if !strings.HasPrefix(csr.Name, "addon-"+clusterName+"-helloworld-") || csr.Spec.Username != identity.AgentUserName(clusterName, agentID) ||
		!approvedBy(&csr, "AutoApprovedByHubCSRApprovingController") {
		t.Errorf("request %s by %s, conditions %+v", csr.Name, csr.Spec.Username, csr.Status.Conditions)
	}
	s.waitCondition(ctx, t, "helloworld", addonv1alpha1.ManagedClusterAddOnCertificateRotated, metav1.ConditionTrue, clusterv1.ReasonClientCertificateUpdated)

	s.setStatus(ctx, t, clusterName, "helloworld", func(st *addonv1alpha1.ManagedClusterAddOnStatus) { st.Registrations = nil })
	s.waitSecretGone(ctx, t)

	s.setStatus(ctx, t, clusterName, "helloworld", func(st *addonv1alpha1.ManagedClusterAddOnStatus) {
		st.Registrations = []addonv1alpha1.RegistrationConfig{kubeClientRegistration}
	})
	s.checkIdentity(ctx, t, s.waitSecret(ctx, t))
	if err := s.hubC.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "helloworld"}}); err != nil {
		t.Fatal(err)
	}
	s.waitSecretGone(ctx, t)
	pending := &corev1.Secret{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: agentNS, Name: "helloworld-hub-kubeconfig-pending"}, pending); !apierrors.IsNotFound(err) {
		t.Errorf("the pending request's Secret is left: %v", err)
	}
}

// waitSecret waits for the add-on's hub credential Secret and returns it.
func (s *suite) waitSecret(ctx context.Context, t *testing.T) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	framework.Eventually(ctx, t, pollTimeout, "Secret helloworld-hub-kubeconfig", func(ctx context.Context) (bool, error) {
		return true, s.spokeC.Get(ctx, types.NamespacedName{Namespace: addonNS, Name: "helloworld-hub-kubeconfig"}, secret)
	})
	return secret
}

// waitSecretGone waits until the add-on's hub credential Secret is deleted.
func (s *suite) waitSecretGone(ctx context.Context, t *testing.T) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "Secret helloworld-hub-kubeconfig deleted", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: addonNS, Name: "helloworld-hub-kubeconfig"}, &corev1.Secret{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// checkIdentity connects to the hub with the kubeconfig of the add-on's
// Secret and checks, with a SelfSubjectReview, that the hub sees the
// add-on's identity.
func (s *suite) checkIdentity(ctx context.Context, t *testing.T, secret *corev1.Secret) {
	t.Helper()
	info, err := kubeconfig.FromSecret(secret.Data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Server != s.hub.Server() {
		t.Errorf("the add-on kubeconfig points at %s, want the hub %s", info.Server, s.hub.Server())
	}
	cfg, err := info.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the add-on's credential: %v", err)
	}
	user := review.Status.UserInfo
	if user.Username != kubeClientRegistration.Subject.User || !slices.Contains(user.Groups, identity.AddonClusterGroup(clusterName, "helloworld")) {
		t.Errorf("the hub sees %s in %v, want %s in %s", user.Username, user.Groups, kubeClientRegistration.Subject.User, identity.AddonClusterGroup(clusterName, "helloworld"))
	}
}

// checkIsolation grants another add-on of cluster1 read on the Secrets of
// cluster1's namespace, as its registration would, and checks with the
// credential of the add-on's Secret that the hub refuses it what is not
// its own.
func (s *suite) checkIsolation(ctx context.Context, t *testing.T, secret *corev1.Secret) {
	t.Helper()
	kit.MustCreate(ctx, t, s.hubC, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "other-secret-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}})
	kit.MustCreate(ctx, t, s.hubC, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "other-secret-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "other-secret-reader"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.AddonClusterGroup(clusterName, "other")}}})
	info, err := kubeconfig.FromSecret(secret.Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := info.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	agenttest.CheckAddonIsolation(ctx, t, c, agenttest.Isolation{Cluster: clusterName, Other: otherName, OtherAddon: "other"})
}

// addonCSRs lists the requests of addon of cluster1 on the hub.
func (s *suite) addonCSRs(ctx context.Context, t *testing.T, addon string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := s.hubC.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: clusterName, addonv1alpha1.AddonLabelKey: addon}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// approvedBy reports whether csr was approved with reason.
func approvedBy(csr *certificatesv1.CertificateSigningRequest, reason string) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue && c.Reason == reason
	})
}
