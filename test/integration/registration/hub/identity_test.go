package hub

import (
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonhub "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managedcluster"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestNamespaceEditorIsNoAgent attacks a cluster registered with
// certificates through the identities its namespace's editors hold (M6 of
// the security review): eve, bound to the built-in edit role in namespace
// cluster1, impersonates ServiceAccount klusterlet of that namespace (the
// token identity of earlier releases) and requests tokens of one she
// creates there. Neither identity reads or writes cluster1's works,
// ManagedCluster or lease, nor files requests, and the hub approves none of
// its add-on requests even where it may file them. A user in group
// open-cluster-management:cluster1 (no system: prefix, which an OIDC
// authenticator without a groups prefix emits; L8) gets nothing either.
// Each of cluster1's bindings names one subject, its certificate group.
func TestNamespaceEditorIsNoAgent(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env := hubtest.Start(t, 5*time.Minute)
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 2,
		func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, hub.Options{}) },
		func(mgr ctrl.Manager) error {
			return addonhub.SetupWithManager(mgr, addonhub.Options{Namespace: config.HubNamespace})
		})
	const cluster = "cluster1"
	createCluster(ctx, t, admin, cluster, true, 0)
	agent := agentClient(t, hubCluster, cluster)
	// The grants exist: the cluster's own agent reads its lease.
	framework.Eventually(ctx, t, pollTimeout, "cluster1's agent reads its lease", func(ctx context.Context) (bool, error) {
		return true, agent.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
	})

	t.Run("each binding names the certificate group only", func(t *testing.T) {
		expectSubjects(ctx, t, admin, cluster, []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.ClusterGroup(cluster)}})
	})

	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "app"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: rawObject(t, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}})}}}}}}
	expectAllowed(t, "admin creates a ManifestWork in cluster1", admin.Create(ctx, work))
	addonSubject := certs.AddonSubject(cluster, "helloworld", addonv1alpha1.Subject{})
	createAddonWithRegistration(ctx, t, admin, cluster, "helloworld")

	// eve may edit namespace cluster1, with the built-in role.
	expectAllowed(t, "bind eve to edit in cluster1", admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "eve-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eve"}},
	}))
	eveCfg, err := hubCluster.ConfigForUser("eve")
	eve := clientFor(t, eveCfg, err)
	legacyUser := identity.ServiceAccountUserName(cluster, identity.LegacyAgentServiceAccount)
	impersonating := rest.CopyConfig(eveCfg)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: legacyUser}
	// The attack's precondition: edit lets eve act as the ServiceAccount.
	framework.Eventually(ctx, t, pollTimeout, "eve impersonates "+legacyUser, func(ctx context.Context) (bool, error) {
		who, err := whoAmI(ctx, impersonating)
		return err == nil && who == legacyUser, nil
	})
	legacySA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: identity.LegacyAgentServiceAccount}}
	expectAllowed(t, "eve creates ServiceAccount cluster1/klusterlet", eve.Create(ctx, legacySA))
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	expectAllowed(t, "eve requests a token of it", eve.SubResource("token").Create(ctx, legacySA, tr))
	minted := tokenConfig(hubCluster, []byte(tr.Status.Token))
	if who, err := whoAmI(ctx, minted); err != nil || who != legacyUser {
		t.Fatalf("eve's token authenticates as %q (%v), want %s", who, err, legacyUser)
	}

	for _, attacker := range []struct {
		name string
		cfg  *rest.Config
	}{{"eve impersonating ServiceAccount klusterlet", impersonating}, {"a token eve requested", minted}} {
		t.Run(attacker.name+" is not cluster1's agent", func(t *testing.T) {
			c := clientFor(t, attacker.cfg, nil)
			refused := func(what string, err error) { t.Helper(); expectRefusedAs(t, what, err, legacyUser) }
			refused("read the work", c.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{}))
			evil := &workv1.ManifestWork{}
			expectAllowed(t, "admin reads the work", admin.Get(ctx, client.ObjectKeyFromObject(work), evil))
			evil.Spec.Workload.Manifests = append(evil.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: rawObject(t, &rbacv1.ClusterRoleBinding{
				TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "evil"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eve"}}})}})
			refused("add a manifest to the work", c.Update(ctx, evil))
			refused("patch the work", c.Patch(ctx, work, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":["x"]}}`))))
			refused("patch the work's status", c.Status().Patch(ctx, work, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"conditions":[]}}`))))
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
			refused("read the ManagedCluster", c.Get(ctx, client.ObjectKeyFromObject(mc), &clusterv1.ManagedCluster{}))
			refused("patch the ManagedCluster's status", c.Status().Patch(ctx, mc, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"version":{"kubernetes":"v0"}}}`))))
			refused("read the lease", c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
			refused("file a certificate request", c.Create(ctx, addonCSR(t, cluster, "helloworld", addonSubject)))
		})
	}

	t.Run("the hub approves no add-on request of the ServiceAccount, even where it may file one", func(t *testing.T) {
		// A hub that lets the ServiceAccount file requests, as the
		// bootstrap role lets every bootstrap identity.
		expectAllowed(t, "bind the bootstrap role to ServiceAccount cluster1/klusterlet", admin.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "klusterlet-files-requests"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:bootstrap"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: cluster, Name: identity.LegacyAgentServiceAccount}},
		}))
		var forged []string
		for _, cfg := range []*rest.Config{impersonating, minted} {
			c := clientFor(t, cfg, nil)
			csr := addonCSR(t, cluster, "helloworld", addonSubject)
			framework.Eventually(ctx, t, pollTimeout, "the ServiceAccount files an add-on request", func(ctx context.Context) (bool, error) {
				err := c.Create(ctx, csr)
				return err == nil, ignoreForbidden(err)
			})
			forged = append(forged, csr.Name)
		}
		// The same request from cluster1's agent is approved: the add-on
		// CSR controller has decided the forged ones before it.
		genuine := addonCSR(t, cluster, "helloworld", addonSubject)
		expectAllowed(t, "cluster1's agent files the add-on request", agent.Create(ctx, genuine))
		framework.Eventually(ctx, t, pollTimeout, "cluster1's agent's add-on request approved", func(ctx context.Context) (bool, error) {
			return approved(ctx, admin, genuine.Name)
		})
		for _, name := range forged {
			obj := &certificatesv1.CertificateSigningRequest{}
			expectAllowed(t, "read request "+name, admin.Get(ctx, client.ObjectKey{Name: name}, obj))
			if len(obj.Status.Conditions) > 0 {
				t.Errorf("the request %s of %s was decided: %+v", name, obj.Spec.Username, obj.Status.Conditions)
			}
		}
	})

	t.Run("group open-cluster-management:cluster1 gets nothing", func(t *testing.T) {
		cfg, err := hubCluster.ConfigForUser("mallory", "open-cluster-management:"+cluster)
		c := clientFor(t, cfg, err)
		refused := func(what string, err error) { t.Helper(); expectRefusedAs(t, what, err, "mallory") }
		refused("read the ManagedCluster", c.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}))
		refused("read the work", c.Get(ctx, client.ObjectKeyFromObject(work), &workv1.ManifestWork{}))
		refused("list the works", c.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster)))
		refused("read the lease", c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
		refused("file a certificate request", c.Create(ctx, addonCSR(t, cluster, "helloworld", addonSubject)))
	})
}

// expectSubjects fails t unless the two RoleBindings of cluster name
// exactly want, once the hub controller has applied them.
func expectSubjects(ctx context.Context, t *testing.T, admin client.Client, cluster string, want []rbacv1.Subject) {
	t.Helper()
	var got [][]rbacv1.Subject
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("the bindings of %s name %v", cluster, want), func(ctx context.Context) (bool, error) {
		got = nil
		for _, name := range []string{managedcluster.RegistrationRoleBindingName(cluster), managedcluster.WorkRoleBindingName(cluster)} {
			rb := &rbacv1.RoleBinding{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, rb); err != nil {
				return false, err
			}
			got = append(got, rb.Subjects)
		}
		return !slices.ContainsFunc(got, func(s []rbacv1.Subject) bool { return !slices.Equal(s, want) }), nil
	})
}

// expectRefusedAs fails t unless err is the API server's authorization
// refusal of user: not a refusal to impersonate it, which would leave the
// attack untried.
func expectRefusedAs(t *testing.T, what string, err error, user string) {
	t.Helper()
	assert.ErrorContains(t, err, fmt.Sprintf("User %q cannot", user), what)
	assert.True(t, apierrors.IsForbidden(err), "%s: got %v, want 403 Forbidden for user %s", what, err, user)
}

// ignoreForbidden returns nil for a 403 (an RBAC grant not yet seen by the
// authorizer) and err otherwise.
func ignoreForbidden(err error) error {
	if apierrors.IsForbidden(err) {
		return nil
	}
	return err
}

// whoAmI returns the user name the hub authenticates cfg as.
func whoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return review.Status.UserInfo.Username, nil
}

// rawObject encodes obj as a ManifestWork manifest.
func rawObject(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// createAddonWithRegistration creates ManagedClusterAddOn addon in cluster's
// namespace with the default kube-apiserver-client registration in its
// status, as the add-on's manager writes it.
func createAddonWithRegistration(ctx context.Context, t *testing.T, admin client.Client, cluster, addon string) {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: addon}}
	expectAllowed(t, "create ManagedClusterAddOn "+addon, admin.Create(ctx, mca))
	mca.Status.Registrations = []addonv1alpha1.RegistrationConfig{{SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Subject: addonv1alpha1.Subject{User: identity.AddonUserName(cluster, addon, addon), Groups: identity.AddonDefaultGroups(cluster, addon)}}}
	expectAllowed(t, "write the registration of ManagedClusterAddOn "+addon, admin.Status().Update(ctx, mca))
}

// addonCSR returns a kube-apiserver-client request of addon on cluster for
// subject, labeled as the registration agent labels it.
func addonCSR(t *testing.T, cluster, addon string, subject pkix.Name) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	p, err := certs.NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	data, err := certutil.MakeCSR(p.Key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "addon-" + cluster + "-", Labels: map[string]string{
			clusterv1.ClusterNameLabelKey: cluster, addonv1alpha1.AddonLabelKey: addon}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: data, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: csr.AgentUsages(),
		},
	}
}

// approved reports whether the request name carries a true Approved
// condition.
func approved(ctx context.Context, c client.Client, name string) (bool, error) {
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return false, err
	}
	return slices.ContainsFunc(obj.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue
	}), nil
}
