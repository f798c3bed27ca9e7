package attackmatrix

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// row is one write of the matrix, as its first column names it. Exactly
// one of writes, requests and attach is set.
type row struct {
	name string
	// writes are sent with dryRun=All: the API server authenticates,
	// authorizes and admits each as it would the write and stores nothing,
	// so that every cell runs at once on the same objects. The
	// administrator must be allowed each (the write is well formed).
	writes []write
	// requests returns the certificate requests actor a files. A request
	// is allowed when it is approved: by the hub controller's policy, or by
	// the actor itself where it may approve.
	requests func(s *setup, a *actor) []request
	// attach is the cluster whose hub tunnel the actor attaches; that
	// cluster's agent must be allowed to.
	attach string
}

// write is one attempt at a row's write, in each form an identity's RBAC
// may grant it (update or patch): it is allowed when one form is.
type write struct {
	what  string
	forms []form
}

// form sends a write as c's user with dryRun=All.
type form func(ctx context.Context, s *setup, c client.Client) error

// request is one certificate request of a row.
type request struct {
	what string
	csr  *certificatesv1.CertificateSigningRequest
}

// The objects the matrix writes, which prepare creates as the
// administrator.
const (
	// workName names a ManifestWork in cluster1 and one in cluster2.
	workName = "matrix"
	// leaseName is each cluster's lease in its namespace.
	leaseName = "managed-cluster-lease"
	// pendingCluster is a ManagedCluster no one accepted, without a
	// namespace.
	pendingCluster = "cluster-pending"
	// newCluster is the name the matrix creates ManagedClusters under.
	newCluster = "cluster-new"
	// autoCluster is a cluster the shared bootstrap token registered and
	// the hub accepted automatically.
	autoCluster = "cluster-auto"
	// templateName is an AddOnTemplate whose hub permissions the matrix
	// changes; okTemplate the one it creates.
	templateName = "matrix"
	okTemplate   = "matrix-ok"
	// importSecret is the import Secret in cluster1.
	importSecret = "auto-import-secret"
	// fieldManager writes what the test writes as the administrator.
	fieldManager = "attackmatrix"
)

var (
	cluster1 = identityhub.Cluster1
	cluster2 = identityhub.Cluster2
)

// rows are the writes of the matrix.
var rows = []row{
	{name: "ManifestWork: spec, labels or annotations (own cluster)", writes: []write{
		change("add a cluster-admin binding to its manifests", cluster1, workName, addManifest),
		change("label it", cluster1, workName, func(w *workv1.ManifestWork) { setLabel(&w.ObjectMeta, "example.com/owner", "matrix") }),
		change("annotate it", cluster1, workName, func(w *workv1.ManifestWork) { setAnnotation(&w.ObjectMeta, "example.com/owner", "matrix") }),
	}},
	{name: "ManifestWork: spec (another cluster)", writes: []write{
		change("add a cluster-admin binding to its manifests", cluster2, workName, addManifest),
	}},
	{name: "ManifestWork: finalizers (own cluster)", writes: []write{
		change("add or remove the work agent's finalizer", cluster1, workName, func(w *workv1.ManifestWork) {
			if !controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer) {
				controllerutil.AddFinalizer(w, workv1.ManifestWorkFinalizer)
			}
		}),
	}},
	{name: "ManifestWork: status (own cluster)", writes: []write{
		changeStatus("report a condition", cluster1, workName, func(w *workv1.ManifestWork) { probe(&w.Status.Conditions) }),
	}},
	{name: "ManifestChunk: create (own cluster)", writes: []write{
		create("write a chunk of a payload", func() client.Object { return newChunk(nil, cluster1, "created") }),
	}},
	{name: "ManifestChunk: change (own cluster)", writes: []write{
		change("replace a chunk's content", cluster1, preparedChunk(), func(c *payloadv1alpha1.ManifestChunk) {
			c.Spec.Encoding, c.Spec.Data = payloadv1alpha1.EncodingIdentity, []byte("evil\n")
		}),
	}},
	{name: "ManifestChunk: delete (own cluster)", writes: []write{
		remove("delete a chunk", func() client.Object {
			return &payloadv1alpha1.ManifestChunk{ObjectMeta: metav1.ObjectMeta{Namespace: cluster1, Name: preparedChunk()}}
		}),
	}},
	{name: "ManagedCluster: spec, labels or annotations (own cluster)", writes: []write{
		change("add a taint", "", cluster1, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "example.com/chosen", Effect: clusterv1.TaintEffectPreferNoSelect})
		}),
		change("set its lease duration to an hour", "", cluster1, func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 3600 }),
		change("redirect its client configs", "", cluster1, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://attacker.example:6443"}}
		}),
		change("label it for a Placement", "", cluster1, func(mc *clusterv1.ManagedCluster) { setLabel(&mc.ObjectMeta, "env", "prod") }),
		change("annotate it", "", cluster1, func(mc *clusterv1.ManagedCluster) { setAnnotation(&mc.ObjectMeta, "example.com/owner", "matrix") }),
	}},
	{name: "ManagedCluster: status (own cluster)", writes: []write{
		changeStatus("report a condition", "", cluster1, func(mc *clusterv1.ManagedCluster) { probe(&mc.Status.Conditions) }),
	}},
	{name: "ManagedCluster: status (another cluster)", writes: []write{
		changeStatus("report a condition", "", cluster2, func(mc *clusterv1.ManagedCluster) { probe(&mc.Status.Conditions) }),
	}},
	// Every agent holds the status writes of every ManagedCluster in RBAC
	// (the agents' shared ClusterRole); admission holds each to its own
	// accepted cluster.
	{name: "ManagedCluster: status (a cluster not accepted)", writes: []write{
		changeStatus("report a condition", "", pendingCluster, func(mc *clusterv1.ManagedCluster) { probe(&mc.Status.Conditions) }),
	}},
	{name: "ManagedCluster: accept a cluster (spec.hubAcceptsClient)", writes: []write{
		change("accept "+pendingCluster, "", pendingCluster, func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = true }),
	}},
	{name: "ManagedCluster: create under a new name", writes: []write{
		create("create "+newCluster, func() client.Object {
			return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: newCluster}}
		}),
	}},
	{name: "ManagedCluster: create with a hub annotation", writes: []write{
		createAnnotated(clusterv1.AutomaticallyAcceptedOnAnnotationKey, "2025-01-01T00:00:00Z"),
		createAnnotated(clusterv1.AgentKeyAnnotationKey, "sha256:0000000000000000000000000000000000000000000000000000000000000000"),
		createAnnotated(clusterv1.AutomaticallyAcceptedForAnnotationKey, "0f6b9d4e-0000-4000-8000-000000000000"),
	}},
	{name: "ManagedCluster: create pointing at a Cluster API cluster", writes: []write{
		createAnnotated(importer.CAPIAnnotation, "team-b/prod"),
	}},
	{name: "ManagedCluster: Cluster API annotation (own cluster)", writes: []write{
		change("point it at Cluster team-b/prod", "", cluster1, func(mc *clusterv1.ManagedCluster) {
			setAnnotation(&mc.ObjectMeta, importer.CAPIAnnotation, "team-b/prod")
		}),
	}},
	{name: "Namespace named like a cluster: create or delete", writes: []write{
		create("create namespace "+pendingCluster+" before its cluster is accepted", func() client.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pendingCluster}}
		}),
		remove("delete namespace "+cluster1, func() client.Object { return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster1}} }),
	}},
	{name: "Lease: renew (own cluster)", writes: []write{
		change("renew it", cluster1, leaseName, renew),
	}},
	{name: "Lease: renew (another cluster)", writes: []write{
		change("renew it", cluster2, leaseName, renew),
	}},
	{name: "ManagedClusterAddOn: status (own cluster)", writes: []write{
		changeStatus("report a condition", cluster1, identityhub.CSRAddon, func(a *addonv1alpha1.ManagedClusterAddOn) { probe(&a.Status.Conditions) }),
	}},
	{name: "ManagedClusterAddOn: hosting cluster annotation (own cluster)", writes: []write{
		change("host its agents on "+cluster2, cluster1, identityhub.CSRAddon, func(a *addonv1alpha1.ManagedClusterAddOn) {
			setAnnotation(&a.ObjectMeta, addonv1alpha1.HostingClusterNameAnnotationKey, cluster2)
		}),
	}},
	{name: "import Secret: write (own cluster)", writes: []write{
		change("replace its kubeconfig", cluster1, importSecret, func(s *corev1.Secret) {
			s.Data = map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\n")}
		}),
	}},
	{name: "certificate request: first join of a new cluster", requests: func(s *setup, a *actor) []request {
		cluster := "join-" + a.slug
		return []request{{"as cluster " + cluster, agentRequest(cluster, cluster, identity.AgentUserName(cluster, identityhub.AgentID), identity.AgentGroups(cluster)...)}}
	}},
	{name: "certificate request: renewal (own cluster)", requests: func(s *setup, a *actor) []request {
		return []request{{"as cluster1's agent, with a new key", agentRequest("", cluster1, agentUser(cluster1), identity.AgentGroups(cluster1)...)}}
	}},
	{name: "certificate request: another subject form (own cluster)", requests: func(s *setup, a *actor) []request {
		groups := identity.AgentGroups(cluster1)
		return []request{
			{"its cluster's group only", agentRequest("", cluster1, agentUser(cluster1), identity.ClusterGroup(cluster1))},
			{"the managed-clusters group only", agentRequest("", cluster1, agentUser(cluster1), identity.ManagedClustersGroup)},
			{"no group", agentRequest("", cluster1, agentUser(cluster1))},
			{"cluster2's group too", agentRequest("", cluster1, agentUser(cluster1), append(slices.Clone(groups), identity.ClusterGroup(cluster2))...)},
			{"another agent ID", agentRequest("", cluster1, identity.AgentUserName(cluster1, "agent2"), groups...)},
		}
	}},
	{name: "certificate request: system:masters (own cluster)", requests: func(s *setup, a *actor) []request {
		return []request{{"its groups and system:masters", agentRequest("", cluster1, agentUser(cluster1), append(identity.AgentGroups(cluster1), "system:masters")...)}}
	}},
	{name: "certificate request: another cluster's identity", requests: func(s *setup, a *actor) []request {
		return []request{
			{"cluster2's subject and label", agentRequest("", cluster2, agentUser(cluster2), identity.AgentGroups(cluster2)...)},
			{"cluster2's subject, labeled cluster1", agentRequest("", cluster1, agentUser(cluster2), identity.AgentGroups(cluster2)...)},
		}
	}},
	{name: "certificate request: register an automatically accepted cluster again", requests: func(s *setup, a *actor) []request {
		out := []request{{"another key, a new name", agentRequest("", autoCluster, agentUser(autoCluster), identity.AgentGroups(autoCluster)...)}}
		if a.name == sharedBootstrap {
			// The token that registered the cluster, under the name of
			// the request that did (deleted since, as
			// kube-controller-manager deletes approved requests).
			same := agentRequest("", autoCluster, agentUser(autoCluster), identity.AgentGroups(autoCluster)...)
			same.GenerateName, same.Name = "", s.autoRequest
			out = append(out, request{"another key, the name of the request that registered it", same})
		}
		return out
	}},
	{name: "ServiceAccount token: another cluster's token identity", writes: []write{
		token(identity.AgentTokenNamespace, identity.AgentTokenServiceAccount(cluster2)),
	}},
	{name: "ServiceAccount token: a cluster-bound bootstrap identity", writes: []write{
		token(identity.ClusterBootstrapNamespace, identity.ClusterBootstrapServiceAccount(cluster1)),
	}},
	// The bootstrap role is bound to the cluster-bound namespace's group,
	// so each of its ServiceAccounts holds it: a token of one not named
	// after a cluster (admission refuses its writes) is no one's to issue.
	{name: "ServiceAccount token: the cluster-bound bootstrap namespace's default ServiceAccount", writes: []write{
		token(identity.ClusterBootstrapNamespace, "default"),
	}},
	{name: "ClusterRoleBinding or RoleBinding of cluster-admin", writes: []write{
		create("bind cluster-admin to a user", func() client.Object {
			return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "matrix-evil"}, RoleRef: clusterRole("cluster-admin"), Subjects: []rbacv1.Subject{mallory}}
		}),
		create("bind cluster-admin to cluster1's agents under a cluster's name", func() client.Object {
			return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: identity.ClusterRBACPrefix + "evil"}, RoleRef: clusterRole("cluster-admin"),
				Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.ClusterGroup(cluster1)}}}
		}),
		create("bind admin in kube-system to a user", func() client.Object {
			return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "matrix-evil"}, RoleRef: clusterRole("admin"), Subjects: []rbacv1.Subject{mallory}}
		}),
	}},
	{name: "RoleBinding of cluster-admin to an add-on agent's ServiceAccount", writes: []write{
		create("bind cluster-admin in kube-system to ServiceAccount kube-system/evil-agent", func() client.Object {
			return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "matrix-evil"}, RoleRef: clusterRole("cluster-admin"),
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: identity.AddonServiceAccount("evil")}}}
		}),
	}},
	{name: "AddOnTemplate: create with a role its author may bind", writes: []write{
		create("create "+okTemplate+" binding "+identityhub.AddonRole+" in every cluster namespace", func() client.Object {
			return addonTemplate(okTemplate, identityhub.AddonRole)
		}),
	}},
	{name: "AddOnTemplate: add cluster-admin to its hub permissions", writes: []write{
		change("bind cluster-admin in every cluster namespace", "", templateName, func(tpl *addonv1alpha1.AddOnTemplate) {
			tpl.Spec.Registration = append(tpl.Spec.Registration, addonTemplate("", "cluster-admin").Spec.Registration...)
		}),
	}},
	{name: "tunnel: attach (own cluster)", attach: cluster1},
	{name: "tunnel: attach (another cluster)", attach: cluster2},
}

// rowByName returns the row the table names name.
func rowByName(name string) (row, bool) {
	for _, r := range rows {
		if r.name == name {
			return r, true
		}
	}
	return row{}, false
}

// mallory is a user the hub knows nothing of.
var mallory = rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}

// clusterRole refers to ClusterRole name.
func clusterRole(name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
}

// agentUser is the user name of agent1 of cluster.
func agentUser(cluster string) string { return identity.AgentUserName(cluster, identityhub.AgentID) }

// object is a pointer to a kind the matrix writes.
type object[T any] interface {
	client.Object
	*T
}

// change is the write what: edit the object namespace/name of type T as
// c's user, by an update (what an identity granted update sends) or by a
// JSON merge patch (granted patch).
func change[T any, P object[T]](what, namespace, name string, edit func(P)) write {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	update := func(ctx context.Context, s *setup, c client.Client) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			obj := P(new(T))
			if err := s.read(ctx, key, obj); err != nil {
				return err
			}
			edit(obj)
			return c.Update(ctx, obj, client.DryRunAll)
		})
	}
	patch := func(ctx context.Context, s *setup, c client.Client) error {
		obj := P(new(T))
		if err := s.read(ctx, key, obj); err != nil {
			return err
		}
		base := obj.DeepCopyObject().(client.Object)
		edit(obj)
		return c.Patch(ctx, obj, client.MergeFrom(base), client.DryRunAll)
	}
	return write{what: what, forms: []form{update, patch}}
}

// changeStatus is change for the status subresource.
func changeStatus[T any, P object[T]](what, namespace, name string, edit func(P)) write {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	update := func(ctx context.Context, s *setup, c client.Client) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			obj := P(new(T))
			if err := s.read(ctx, key, obj); err != nil {
				return err
			}
			edit(obj)
			return c.Status().Update(ctx, obj, client.DryRunAll)
		})
	}
	patch := func(ctx context.Context, s *setup, c client.Client) error {
		obj := P(new(T))
		if err := s.read(ctx, key, obj); err != nil {
			return err
		}
		base := obj.DeepCopyObject().(client.Object)
		edit(obj)
		return c.Status().Patch(ctx, obj, client.MergeFrom(base), client.DryRunAll)
	}
	return write{what: what, forms: []form{update, patch}}
}

// create is the write what: create the object newObj returns.
func create(what string, newObj func() client.Object) write {
	return write{what: what, forms: []form{func(ctx context.Context, _ *setup, c client.Client) error {
		return c.Create(ctx, newObj(), client.DryRunAll)
	}}}
}

// remove is the write what: delete the object newObj returns.
func remove(what string, newObj func() client.Object) write {
	return write{what: what, forms: []form{func(ctx context.Context, _ *setup, c client.Client) error {
		return c.Delete(ctx, newObj(), client.DryRunAll)
	}}}
}

// createAnnotated creates ManagedCluster newCluster annotated key=value.
func createAnnotated(key, value string) write {
	return create("create "+newCluster+" annotated "+key, func() client.Object {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: newCluster, Annotations: map[string]string{key: value}}}
	})
}

// token is the write: issue a token of ServiceAccount namespace/name.
func token(namespace, name string) write {
	return write{what: "issue a token of " + namespace + "/" + name, forms: []form{func(ctx context.Context, _ *setup, c client.Client) error {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		return c.SubResource("token").Create(ctx, sa, &authenticationv1.TokenRequest{}, client.DryRunAll)
	}}}
}

// newChunk returns the ManifestChunk of namespace that holds content,
// named by its digest as the hub requires.
func newChunk(t *testing.T, namespace, content string) *payloadv1alpha1.ManifestChunk {
	data := []byte(content + "\n")
	obj, err := payload.Object(namespace, payload.Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: payload.Digest(data), Size: int64(len(data))}, Data: data})
	if err != nil && t != nil {
		t.Fatal(err)
	}
	return obj
}

// preparedChunk is the name of the ManifestChunk prepare creates in each
// cluster namespace.
func preparedChunk() string { return payload.ChunkName(payload.Digest([]byte("prepared\n"))) }

// addManifest adds a binding of cluster-admin to the work's manifests.
func addManifest(w *workv1.ManifestWork) {
	raw, _ := json.Marshal(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "matrix-evil"}, "roleRef": clusterRole("cluster-admin"), "subjects": []rbacv1.Subject{mallory}})
	w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
}

// renew renews a lease now.
func renew(l *coordinationv1.Lease) { l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()} }

// probe sets a condition of the matrix's own type.
func probe(conds *[]metav1.Condition) {
	meta.SetStatusCondition(conds, metav1.Condition{Type: "AttackMatrixProbe", Status: metav1.ConditionTrue, Reason: "Probe", Message: "written by the attack matrix"})
}

// setLabel and setAnnotation set one label or annotation.
func setLabel(m *metav1.ObjectMeta, key, value string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[key] = value
}

func setAnnotation(m *metav1.ObjectMeta, key, value string) {
	metav1.SetMetaDataAnnotation(m, key, value)
}

// addonTemplate returns AddOnTemplate name whose registration binds
// ClusterRole role in every cluster namespace.
func addonTemplate(name, role string) *addonv1alpha1.AddOnTemplate {
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}}
	tpl.Spec.AddonName = "matrix"
	raw, _ := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: "matrix"}})
	tpl.Spec.AgentSpec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{{
			Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role},
		}}}}}
	return tpl
}

// agentRequest returns a certificate request of the kube-apiserver-client
// signer labeled for cluster, for common name cn in orgs, with a new key;
// named after cluster unless its name is set.
func agentRequest(name, cluster, cn string, orgs ...string) *certificatesv1.CertificateSigningRequest {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		panic(err)
	}
	req := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     csr.AgentUsages(),
		},
	}
	if name == "" {
		req.GenerateName = cluster + "-matrix-"
	}
	return req
}
