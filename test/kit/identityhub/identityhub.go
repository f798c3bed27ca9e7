// Package identityhub starts a hub on which every kind of identity the
// product hands out exists for real: the manifests the ClusterManager
// operator installs, with the cluster importer and the operator's own
// RBAC, the hub controllers running in-process as their shipped
// ServiceAccount, cluster1 registered through its cluster-bound bootstrap
// identity with the token driver (so that both its agent certificate and
// its token identity hold rights), cluster2 accepted by the administrator,
// and two template add-ons on cluster1, one per registration driver. The
// tests of what those identities may do on the hub (test/integration/
// permissions, test/integration/attackmatrix) start it.
package identityhub

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/deploy"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/token"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managedcluster"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// The clusters and add-ons the hub is set up with. Cluster1 registers
// through the bootstrap flow with the token driver, so that both its
// certificate and its token identity hold rights; Cluster2 is accepted by
// the administrator and is "another cluster" to cluster1's identities.
const (
	Cluster1 = "cluster1"
	Cluster2 = "cluster2"
	// AgentID is the agent ID in the common name of cluster1's agent
	// certificates.
	AgentID = "agent1"
	// CSRAddon is a template add-on whose agent on cluster1 uses the
	// certificate driver, TokenAddon one whose agent uses the token driver.
	CSRAddon   = "addon-csr"
	TokenAddon = "addon-token"
	// AddonRole is the ClusterRole both add-ons' templates ask to be bound
	// in the cluster namespace (hub permission CurrentCluster): get, list
	// and watch ConfigMaps.
	AddonRole = "permissions-test:addon"
	// PollTimeout bounds every wait for the hub controller.
	PollTimeout = time.Minute
)

// fieldManager writes what the hub is set up with as the administrator.
const fieldManager = "identityhub"

// Options change how the hub's controllers run.
type Options struct {
	// Registration are the options of the hub's registration controllers.
	Registration registrationhub.Options
}

// Hub is a hub set up by Start.
type Hub struct {
	// Ctx ends when the test ends or its time is up.
	Ctx context.Context
	// Env is the environment the hub runs in, Cluster the hub itself.
	Env     *framework.Environment
	Cluster *framework.Cluster
	// Admin is a client of the hub's administrator.
	Admin client.Client
	// Objects are the shipped manifests installed on the hub.
	Objects []*unstructured.Unstructured
}

// Start starts a hub, installs what the ClusterManager operator and `hub
// init` install (with the cluster importer), runs the hub controllers as
// their shipped ServiceAccount, registers cluster1 and cluster2 and sets up
// the add-ons, and waits until the hub controller has written every grant.
// The hub lives until the test ends or timeout.
func Start(t *testing.T, timeout time.Duration, opts Options) *Hub {
	t.Helper()
	ctx, env := hubtest.Start(t, timeout)
	h := &Hub{Ctx: ctx, Env: env, Cluster: env.Cluster("hub")}
	h.Admin = h.Cluster.Client()
	h.install(t)
	hubtest.RunControllers(t, h.Cluster, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, opts.Registration) },
		(&deploy.Reconciler{}).SetupWithManager, (&token.Reconciler{}).SetupWithManager)
	h.registerWithToken(t, Cluster1)
	hubtest.AcceptClusters(ctx, t, h.Admin, Cluster2)
	h.waitClusterGrants(t, Cluster1, true)
	h.waitClusterGrants(t, Cluster2, false)
	kit.MustCreate(ctx, t, h.Admin, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AddonRole},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}})
	h.enableAddon(t, CSRAddon, "")
	h.enableAddon(t, TokenAddon, addonv1alpha1.KubeClientDriverToken)
	return h
}

// install completes what hubtest.Start installed (the hub's manifests as
// config renders them for the ClusterManager operator, and the
// ClusterManager) with what the cluster importer adds to them and with the
// operator's own manifests (its ServiceAccount and ClusterRole among them),
// and keeps every object of those manifests in h.Objects. Nothing runs the
// Deployments: the hub controller runs in-process (RunControllers), and
// the other identities need only their RBAC.
func (h *Hub) install(t *testing.T) {
	t.Helper()
	// The URL only renders the conversion settings, which hubtest.Start
	// applied with its own.
	const url = "https://127.0.0.1:1/convert"
	plain, err := config.HubObjects(config.HubValues{ConversionWebhookURL: url, LeaderElection: hubtest.LeaderElection})
	kit.Must(t, "render the hub objects", err)
	withImporter, err := config.HubObjects(config.HubValues{ConversionWebhookURL: url, LeaderElection: hubtest.LeaderElection, Importer: &config.ImporterValues{}})
	kit.Must(t, "render the hub objects with the importer", err)
	operator, err := config.HubOperatorObjects(config.HubOperatorValues{HubLeaderElection: hubtest.LeaderElection})
	kit.Must(t, "render the ClusterManager operator's objects", err)
	key := func(u *unstructured.Unstructured) string {
		return u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	installed := map[string]bool{}
	for _, u := range plain {
		installed[key(u)] = true
	}
	var add []*unstructured.Unstructured
	for _, u := range append(withImporter, operator...) {
		if !installed[key(u)] && u.GetKind() != "ClusterManager" {
			installed[key(u)] = true
			add = append(add, u)
		}
	}
	kit.Must(t, "apply the importer's and the operator's objects", apply.Apply(h.Ctx, h.Admin, add, apply.Options{FieldManager: fieldManager}))
	h.Objects = append(plain, add...)
}

// registerWithToken registers cluster as its agent does with the token
// driver: the cluster-bound bootstrap identity (`kubectl ocm hub token
// --cluster-name`) creates its ManagedCluster and a token request, which
// the administrator approves, and accepts the cluster; the hub controller
// then issues the token and creates the token identity.
func (h *Hub) registerWithToken(t *testing.T, cluster string) {
	t.Helper()
	tr, err := config.BootstrapToken(h.Ctx, h.Admin, cluster, time.Hour, fieldManager)
	kit.Must(t, "issue the bootstrap token of "+cluster, err)
	boot := ClientFor(t, TokenConfig(h.Cluster, tr.Token))
	kit.Must(t, "the bootstrap identity creates ManagedCluster "+cluster,
		boot.Create(h.Ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}))

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	kit.Must(t, "generate a key", err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName: identity.AgentUserName(cluster, AgentID), Organization: []string{identity.ClusterGroup(cluster), identity.ManagedClustersGroup},
	}}, key)
	kit.Must(t, "create a certificate request", err)
	req := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certs.AgentTokenSignerName,
			Usages:     csr.AgentUsages(),
		},
	}
	kit.Must(t, "the bootstrap identity requests a token of "+cluster, boot.Create(h.Ctx, req))
	kit.Must(t, "approve the token request", csr.ApproveRequest(h.Ctx, h.Admin, req, "ApprovedByAdmin", "approved by the hub administrator"))
	kit.Must(t, "accept "+cluster, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := h.Admin.Get(h.Ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		mc.Spec.HubAcceptsClient = true
		return h.Admin.Update(h.Ctx, mc)
	}))
}

// waitClusterGrants waits until the hub controller has written the RBAC of
// the accepted cluster: every RoleBinding naming the cluster's agent
// subjects (with the token identity and its Role when tokenDriver). What
// the agent may do outside its namespace, every agent may, through the
// agents' shared ClusterRoleBinding installed with the hub.
func (h *Hub) waitClusterGrants(t *testing.T, cluster string, tokenDriver bool) {
	t.Helper()
	want := identity.AgentSubjects(cluster, tokenDriver)
	h.Poll(t, "the RBAC of accepted cluster "+cluster, func(ctx context.Context) (bool, error) {
		for _, key := range []client.ObjectKey{
			{Namespace: cluster, Name: managedcluster.RegistrationRoleBindingName(cluster)},
			{Namespace: cluster, Name: managedcluster.WorkRoleBindingName(cluster)},
			{Namespace: certs.HubCABundleNamespace, Name: managedcluster.HubCABundleRoleBindingName(cluster)},
		} {
			rb := &rbacv1.RoleBinding{}
			if err := h.Admin.Get(ctx, key, rb); err != nil || !slices.Equal(rb.Subjects, want) {
				return false, client.IgnoreNotFound(err)
			}
		}
		if tokenDriver {
			err := h.Admin.Get(ctx, client.ObjectKey{Namespace: identity.AgentTokenNamespace, Name: managedcluster.TokenRoleName(cluster)}, &rbacv1.RoleBinding{})
			return err == nil, client.IgnoreNotFound(err)
		}
		return true, nil
	})
}

// enableAddon creates template add-on name, whose registration asks for
// AddonRole in the cluster namespace, enables it on cluster1 and writes
// the status its agent and the configuration controller would (the
// desired template, and kubeClientDriver when driver is set), then waits
// until the hub controller has bound the role and, for the token driver,
// written the add-on's ServiceAccount and token Role.
func (h *Hub) enableAddon(t *testing.T, name, driver string) {
	t.Helper()
	kit.MustCreate(h.Ctx, t, h.Admin, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}}})
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName(name)
	cm.SetNamespace(addonv1alpha1.DefaultAddonInstallNamespace)
	raw, err := cm.MarshalJSON()
	kit.Must(t, "encode the add-on's manifest", err)
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}}
	tpl.Spec.AddonName = name
	tpl.Spec.AgentSpec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{{
			Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: AddonRole},
		}}}}}
	kit.MustCreate(h.Ctx, t, h.Admin, tpl)
	kit.MustCreate(h.Ctx, t, h.Admin, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: Cluster1, Name: name}})

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("AddOnTemplate"))
	kit.Must(t, "read the template", h.Admin.Get(h.Ctx, client.ObjectKey{Name: name}, u))
	hash, err := addonconfig.SpecHash(u)
	kit.Must(t, "hash the template", err)
	referent := addonv1alpha1.ConfigReferent{Name: name}
	kit.Must(t, "write the status of add-on "+name, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := h.Admin.Get(h.Ctx, client.ObjectKey{Namespace: Cluster1, Name: name}, mca); err != nil {
			return err
		}
		mca.Status.KubeClientDriver = driver
		mca.Status.ConfigReferences = []addonv1alpha1.ConfigReference{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
			ConfigReferent:      referent,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: hash},
		}}
		return h.Admin.Status().Update(h.Ctx, mca)
	}))

	want := []client.Object{&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: Cluster1, Name: template.PermissionBindingName(name, "ClusterRole")}}}
	if driver == addonv1alpha1.KubeClientDriverToken {
		for _, obj := range token.Objects(Cluster1, name) {
			want = append(want, obj.DeepCopyObject().(client.Object))
		}
	}
	for _, obj := range want {
		h.Poll(t, "add-on "+name+": "+obj.GetNamespace()+"/"+obj.GetName(), func(ctx context.Context) (bool, error) {
			err := h.Admin.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return err == nil, client.IgnoreNotFound(err)
		})
	}
}

// Poll waits until cond holds, at most PollTimeout.
func (h *Hub) Poll(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(h.Ctx, t, PollTimeout, what, cond)
}

// TokenConfig returns a configuration of c that authenticates with token
// alone.
func TokenConfig(c *framework.Cluster, token string) *rest.Config {
	return &rest.Config{Host: c.Server(), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData()}}
}

// ClientFor returns a client with the project's scheme for cfg.
func ClientFor(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	kit.Must(t, "create a client", err)
	return c
}
