package addontoken

import (
	"context"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/token"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// Install namespaces of the add-ons on cluster1.
const (
	alphaNS = "alpha-ns"
	betaNS  = "beta-ns"
)

// TestTokenDriver follows two template add-ons with the token driver from
// their registrations to working, isolated tokens, through refreshes, and
// back.
func TestTokenDriver(t *testing.T) {
	s := setup(t)
	for _, ns := range []string{alphaNS, betaNS} {
		s.create(t, s.spokeC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	s.createRole(t, "alpha-configmap-reader", "configmaps")
	s.createRole(t, "beta-secret-reader", "secrets")
	s.createAddon(t, "alpha", "alpha-configmap-reader", alphaNS)
	s.createAddon(t, "beta", "beta-secret-reader", betaNS)
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"registration declares the driver and the hub builds the infrastructure", s.testInfrastructure},
		{"the token authenticates as the ServiceAccount with the registration's permissions", s.testIdentity},
		{"refresh when the ServiceAccount is recreated", s.testRefresh},
		{"a deleted Secret is written again", s.testSecretDeleted},
		{"deleting the add-on removes its Secret", s.testDelete},
	} {
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// hasToken reports whether a Secret holds a token credential.
func hasToken(s *corev1.Secret) bool { return len(s.Data[kubeconfig.TokenKey]) > 0 }

// testInfrastructure checks what the agent reports and what the hub writes
// for alpha.
func (s *suite) testInfrastructure(t *testing.T) {
	s.waitSecret(t, "alpha", alphaNS, hasToken)
	mca := s.waitCondition(t, "alpha", addonv1alpha1.ManagedClusterAddOnTokenRefreshed, metav1.ConditionTrue, addonv1alpha1.TokenRefreshedReasonRefreshed)
	if mca.Status.KubeClientDriver != addonv1alpha1.KubeClientDriverToken {
		t.Errorf("status.kubeClientDriver = %q, want token", mca.Status.KubeClientDriver)
	}
	i := registration.KubeClient(mca.Status.Registrations)
	if i < 0 || mca.Status.Registrations[i].Subject.User != identity.AddonTokenUserName(clusterName, "alpha") {
		t.Errorf("registrations %+v, want the kube client subject %s", mca.Status.Registrations, identity.AddonTokenUserName(clusterName, "alpha"))
	}
	ready := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady)
	sa := &corev1.ServiceAccount{}
	kit.Must(t, "get ServiceAccount alpha-agent", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: "alpha-agent"}, sa))
	if uid, _ := registration.ServiceAccountUID(ready.Message); ready.Reason != addonv1alpha1.TokenInfrastructureReasonReady || uid != string(sa.UID) {
		t.Errorf("TokenInfrastructureReady %+v, want the UID %s of ServiceAccount alpha-agent", ready, sa.UID)
	}
	if sa.Labels[addonv1alpha1.TokenInfrastructureLabelKey] != "true" || sa.Labels[addonv1alpha1.AddonNameLabelKey] != "alpha" {
		t.Errorf("ServiceAccount labels %v", sa.Labels)
	}
	role := &rbacv1.Role{}
	kit.Must(t, "get Role alpha-token-role", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: token.RoleName("alpha")}, role))
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].ResourceNames, []string{"alpha-agent"}) || !slices.Equal(role.Rules[0].Resources, []string{"serviceaccounts/token"}) {
		t.Errorf("Role rules %+v, want create on serviceaccounts/token of alpha-agent only", role.Rules)
	}
	binding := &rbacv1.RoleBinding{}
	kit.Must(t, "get the hub permission binding", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: "open-cluster-management:alpha:clusterrole:agent"}, binding))
	if !slices.ContainsFunc(binding.Subjects, func(sub rbacv1.Subject) bool {
		return sub.Kind == rbacv1.ServiceAccountKind && sub.Name == "alpha-agent"
	}) {
		t.Errorf("the hub permission binding's subjects %+v lack ServiceAccount alpha-agent", binding.Subjects)
	}
}

// tokenClient returns a hub client with the credential of an add-on Secret
// and the user the hub sees.
func (s *suite) tokenClient(t *testing.T, secret *corev1.Secret) (client.Client, string) {
	t.Helper()
	raw, err := clientcmd.Load(secret.Data[kubeconfig.KubeconfigKey])
	kit.Must(t, "load the add-on kubeconfig", err)
	if auth := raw.AuthInfos[kubeconfig.HubUserName]; auth == nil || auth.TokenFile != kubeconfig.TokenKey {
		t.Errorf("the add-on kubeconfig's user does not read its token from file %s: %+v", kubeconfig.TokenKey, auth)
	}
	info, err := kubeconfig.FromSecret(secret.Data)
	kit.Must(t, "read the add-on kubeconfig", err)
	cfg, err := info.RESTConfig()
	kit.Must(t, "add-on client configuration", err)
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(s.ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	kit.Must(t, "SelfSubjectReview with the add-on's token", err)
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	kit.Must(t, "add-on client", err)
	return c, review.Status.UserInfo.Username
}

// testIdentity checks whom alpha's token authenticates as and what it
// reaches: its registration's permission and nothing else.
func (s *suite) testIdentity(t *testing.T) {
	s.waitSecret(t, "beta", betaNS, hasToken)
	c, user := s.tokenClient(t, s.waitSecret(t, "alpha", alphaNS, hasToken))
	if user != identity.AddonTokenUserName(clusterName, "alpha") {
		t.Fatalf("the hub sees %s, want %s", user, identity.AddonTokenUserName(clusterName, "alpha"))
	}
	if err := c.List(s.ctx, &corev1.ConfigMapList{}, client.InNamespace(clusterName)); err != nil {
		t.Errorf("alpha cannot list the ConfigMaps its registration grants: %v", err)
	}
	agenttest.CheckAddonIsolation(s.ctx, t, c, agenttest.Isolation{Cluster: clusterName, Other: otherName, OtherAddon: "beta"})
	// Only the cluster's own agent may request tokens, and of its add-ons only.
	other, err := client.New(agenttest.AgentConfig(t, s.hub, otherName, "agent1"), client.Options{Scheme: apis.Scheme})
	kit.Must(t, "cluster2 agent client", err)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "alpha-agent"}}
	if err := other.SubResource("token").Create(s.ctx, sa, &authenticationv1.TokenRequest{}); !apierrors.IsForbidden(err) {
		t.Errorf("cluster2's agent requesting a token of cluster1's alpha-agent: got %v, want 403 Forbidden", err)
	}
	own, err := client.New(agenttest.AgentConfig(t, s.hub, clusterName, "agent1"), client.Options{Scheme: apis.Scheme})
	kit.Must(t, "cluster1 agent client", err)
	foreign := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "default"}}
	if err := own.SubResource("token").Create(s.ctx, foreign, &authenticationv1.TokenRequest{}); !apierrors.IsForbidden(err) {
		t.Errorf("cluster1's agent requesting a token of ServiceAccount default: got %v, want 403 Forbidden", err)
	}
}

// testRefresh recreates alpha's ServiceAccount on the hub, which kills its
// tokens, and checks that a new, working token of the new ServiceAccount is
// written.
func (s *suite) testRefresh(t *testing.T) {
	sa := &corev1.ServiceAccount{}
	kit.Must(t, "get ServiceAccount alpha-agent", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: "alpha-agent"}, sa))
	kit.Must(t, "delete ServiceAccount alpha-agent", s.hubC.Delete(s.ctx, sa))
	// The old token dies with its ServiceAccount; the new one names the new UID.
	s.waitSecret(t, "alpha", alphaNS, func(sec *corev1.Secret) bool {
		tok, err := kubeconfig.ParseServiceAccountToken(sec.Data[kubeconfig.TokenKey])
		return err == nil && tok.UID != "" && tok.UID != string(sa.UID)
	})
	s.poll(t, "the refreshed token works", func(ctx context.Context) (bool, error) {
		sec := &corev1.Secret{}
		if err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: alphaNS, Name: "alpha-hub-kubeconfig"}, sec); err != nil {
			return false, err
		}
		info, err := kubeconfig.FromSecret(sec.Data)
		if err != nil {
			return false, err
		}
		cfg, err := info.RESTConfig()
		if err != nil {
			return false, err
		}
		_, err = kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil, nil
	})
}

// testSecretDeleted deletes beta's Secret on cluster1 and waits until the
// agent, which watches it, writes a new one.
func (s *suite) testSecretDeleted(t *testing.T) {
	old := s.waitSecret(t, "beta", betaNS, hasToken)
	kit.Must(t, "delete Secret beta-hub-kubeconfig", s.spokeC.Delete(s.ctx, old))
	s.waitSecret(t, "beta", betaNS, func(sec *corev1.Secret) bool { return hasToken(sec) && sec.UID != old.UID })
}

// testDelete deletes alpha and waits until its Secret is gone from
// cluster1 and its ServiceAccount from the hub.
func (s *suite) testDelete(t *testing.T) {
	kit.Must(t, "delete alpha", s.hubC.Delete(s.ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "alpha"}}))
	s.poll(t, "Secret alpha-hub-kubeconfig deleted from cluster1", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: alphaNS, Name: "alpha-hub-kubeconfig"}, &corev1.Secret{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	s.poll(t, "ServiceAccount alpha-agent deleted from the hub", func(ctx context.Context) (bool, error) {
		err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: "alpha-agent"}, &corev1.ServiceAccount{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	s.waitSecret(t, "beta", betaNS, hasToken)
}
