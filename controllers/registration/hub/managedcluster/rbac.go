package managedcluster

import (
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Names of the RBAC objects the hub creates per cluster and of the common
// ClusterRoles shipped in config/hub that they bind.
const (
	// rbacPrefix starts every per-cluster RBAC name.
	rbacPrefix = identity.ClusterRBACPrefix
	// RegistrationClusterRole is the common ClusterRole of a cluster's
	// registration agent inside its cluster namespace.
	RegistrationClusterRole = rbacPrefix + "registration"
	// WorkClusterRole is the common ClusterRole of a cluster's work agent
	// inside its cluster namespace.
	WorkClusterRole = rbacPrefix + "work"
	// HubCABundleClusterRole is the common ClusterRole that lets an agent
	// read the hub's CA bundle (certs.HubCABundleConfigMap), bound in
	// certs.HubCABundleNamespace only. Its name is outside rbacPrefix, so
	// that no cluster's ClusterRole (ClusterRoleName) can take it.
	HubCABundleClusterRole = "open-cluster-management:hub-ca-bundle"
	// AgentsClusterRole is the ClusterRole, and the ClusterRoleBinding,
	// shipped in config/hub that grant every cluster's agent at once
	// (identity.AllAgentsSubjects) what it does outside its cluster
	// namespace. Its name is outside rbacPrefix, as HubCABundleClusterRole's.
	AgentsClusterRole = "open-cluster-management:managed-clusters"
)

// ClusterRoleName returns the name of the per-cluster ClusterRole and
// ClusterRoleBinding of cluster.
func ClusterRoleName(cluster string) string { return rbacPrefix + cluster }

// RegistrationRoleBindingName returns the name of the RoleBinding, in the
// cluster namespace, that binds RegistrationClusterRole.
func RegistrationRoleBindingName(cluster string) string {
	return ClusterRoleName(cluster) + ":registration"
}

// WorkRoleBindingName returns the name of the RoleBinding, in the cluster
// namespace, that binds WorkClusterRole.
func WorkRoleBindingName(cluster string) string { return ClusterRoleName(cluster) + ":work" }

// HubCABundleRoleBindingName returns the name of the RoleBinding, in
// certs.HubCABundleNamespace, that binds HubCABundleClusterRole to the
// cluster's agent.
func HubCABundleRoleBindingName(cluster string) string {
	return ClusterRoleName(cluster) + ":hub-ca-bundle"
}

// TokenRoleName returns the name of the Role and RoleBinding, in
// identity.AgentTokenNamespace, that let the token identity of a cluster
// registered with the token driver request its own tokens and delete its
// own ServiceAccount.
func TokenRoleName(cluster string) string { return ClusterRoleName(cluster) + ":token" }

// subjects are those the per-cluster RBAC grants to: the certificate group
// of the cluster's agent and, for a cluster registered with the token
// driver, its token identity (identity.AgentSubjects).
func subjects(cluster string, tokenDriver bool) []rbacv1.Subject {
	return identity.AgentSubjects(cluster, tokenDriver)
}

// labels mark every object the hub creates for cluster, so that watches and
// cleanup find them.
func labels(cluster string) map[string]string {
	return map[string]string{clusterv1.ClusterNameLabelKey: cluster}
}

// clusterNamespace renders the cluster namespace as the hub creates it
// (clusternamespace.New), without the mark of the cluster's UID.
func clusterNamespace(cluster string) *corev1.Namespace {
	return clusternamespace.New(cluster, "")
}

// RBAC lets the controller grant only what it holds itself: the reading of
// certificate requests of the per-cluster ClusterRole, bind on the common
// ClusterRoles that the per-cluster RoleBindings refer to, and the token
// identity's own Role.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=create;get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=patch;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,resourceNames=open-cluster-management:managedcluster:registration;open-cluster-management:managedcluster:work;open-cluster-management:hub-ca-bundle,verbs=bind
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create

// clusterRoleRules returns the rules of the per-cluster ClusterRole: the
// agent may get the certificate requests it made itself, for the cluster and
// for its add-ons (ownCSRs, see ownCSRNames), never another cluster's. (OCM
// grants every agent list and watch on all requests.) A certificate request
// cannot be created under a name chosen in advance, so RBAC cannot limit
// creating them to one cluster; the agents' shared ClusterRole
// (config/hub/20-agent-rbac.yaml) grants that, with the rest of what an
// agent does outside its namespace that something other than RBAC holds to
// its own cluster (docs/design/authorization.md).
//
// The hub binds this role only while ownCSRs is not empty (csrGrants): a
// ClusterRoleBinding costs every request to the hub a check, so one per
// cluster costs the fleet's requests a check per cluster.
func clusterRoleRules(ownCSRs []string) []rbacv1.PolicyRule {
	if len(ownCSRs) == 0 {
		return nil
	}
	return []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"},
		ResourceNames: ownCSRs, Verbs: []string{"get"}}}
}

// Bounds of the certificate requests a cluster's agent may read. Its own
// renewals and each add-on registration's requests (one add-on, one signer)
// are counted apart, so that add-ons filing requests never push the
// cluster's renewal out of the role, nor one add-on another's, nor one
// registration of an add-on another of the same add-on filed in the same
// second.
const (
	// maxOwnCSRs bounds the cluster's own requests: the newest ones, enough
	// for a renewal in flight and a few retries.
	maxOwnCSRs = 5
	// maxAddonCSRs bounds the requests of each add-on registration: of one
	// add-on to one signer.
	maxAddonCSRs = 3
	// maxAddonCSRsTotal bounds the requests of all add-ons together (the
	// newest), so that the role stays small whatever labels the agent puts
	// on its requests.
	maxAddonCSRsTotal = 100
)

// ownCSRNames returns the names of the certificate requests labeled with
// cluster that its own agent identity made: the newest maxOwnCSRs renewals,
// then, newest first, up to maxAddonCSRs requests of each add-on (labeled
// open-cluster-management.io/addon-name) to each signer, maxAddonCSRsTotal
// in all. Creation times have a granularity of one second, so requests of
// one second are ordered by name: counting per signer keeps an add-on's
// requests to its several signers, filed together, all readable.
func ownCSRNames(cluster string, csrs []certificatesv1.CertificateSigningRequest) []string {
	own := slices.DeleteFunc(slices.Clone(csrs), func(csr certificatesv1.CertificateSigningRequest) bool {
		who := identity.Classify(csr.Spec.Username)
		return csr.Labels[clusterv1.ClusterNameLabelKey] != cluster || who.Kind != identity.Agent || who.Cluster != cluster
	})
	slices.SortFunc(own, func(a, b certificatesv1.CertificateSigningRequest) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var renewals, addons []string
	perRegistration := map[[2]string]int{}
	for _, csr := range own {
		addon, isAddon := csr.Labels[addonv1alpha1.AddonLabelKey]
		registration := [2]string{addon, csr.Spec.SignerName}
		switch {
		case !isAddon && len(renewals) < maxOwnCSRs:
			renewals = append(renewals, csr.Name)
		case isAddon && perRegistration[registration] < maxAddonCSRs && len(addons) < maxAddonCSRsTotal:
			perRegistration[registration]++
			addons = append(addons, csr.Name)
		}
	}
	return append(renewals, addons...)
}

// clusterRole renders the per-cluster ClusterRole.
func clusterRole(cluster string, ownCSRs ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(cluster), Labels: labels(cluster)},
		Rules:      clusterRoleRules(ownCSRs),
	}
}

// clusterRoleBinding renders the binding of the per-cluster ClusterRole,
// which exists only while the cluster has certificate requests of its own.
// Every request to the hub is checked against every ClusterRoleBinding, so
// its subjects are as few as the cluster's agent needs.
func clusterRoleBinding(cluster string, tokenDriver bool) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(cluster), Labels: labels(cluster)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName(cluster)},
		Subjects:   subjects(cluster, tokenDriver),
	}
}

// roleBindings renders the RoleBindings of an accepted cluster: registration
// and work in its namespace, and the hub's CA bundle in
// certs.HubCABundleNamespace.
func roleBindings(cluster string, tokenDriver bool) []*rbacv1.RoleBinding {
	rb := func(namespace, name, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels(cluster)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subjects(cluster, tokenDriver),
		}
	}
	return []*rbacv1.RoleBinding{
		rb(cluster, RegistrationRoleBindingName(cluster), RegistrationClusterRole),
		rb(cluster, WorkRoleBindingName(cluster), WorkClusterRole),
		rb(certs.HubCABundleNamespace, HubCABundleRoleBindingName(cluster), HubCABundleClusterRole),
	}
}

// tokenRules are the rules of a token identity's Role in
// identity.AgentTokenNamespace: the agent refreshes its token through the
// TokenRequest API and revokes it, when the cluster unjoins, by deleting its
// ServiceAccount; of its own ServiceAccount only.
func tokenRules(cluster string) []rbacv1.PolicyRule {
	sa := []string{identity.AgentTokenServiceAccount(cluster)}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: sa, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: sa, Verbs: []string{"delete"}},
	}
}

// tokenGrants renders the Role and RoleBinding of the token identity of
// cluster, whose ServiceAccount is sa, in identity.AgentTokenNamespace. They
// are owned by sa, so that deleting it (denial, deletion, unjoin) takes them
// along; the RoleBinding's one subject is the token identity itself.
func tokenGrants(cluster string, sa *corev1.ServiceAccount) (*rbacv1.Role, *rbacv1.RoleBinding) {
	om := metav1.ObjectMeta{
		Name: TokenRoleName(cluster), Namespace: identity.AgentTokenNamespace, Labels: labels(cluster),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID}},
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: om,
		Rules:      tokenRules(cluster),
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: *om.DeepCopy(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: TokenRoleName(cluster)},
		Subjects:   []rbacv1.Subject{identity.AgentTokenSubject(cluster)},
	}
	return role, binding
}
