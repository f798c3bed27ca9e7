package managedcluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// TestClusterRoleRules checks the per-cluster ClusterRole: reading the
// cluster's own certificate requests by name and nothing else, and no rule
// at all without requests to read (the hub then binds it to no one).
func TestClusterRoleRules(t *testing.T) {
	own := []string{"c1-abcde"}
	tests := []struct {
		name     string
		ownCSRs  []string
		resource string
		verb     string
		want     bool
	}{
		{"may get its own CSRs", own, "certificatesigningrequests", "get", true},
		{"may not list CSRs", own, "certificatesigningrequests", "list", false},
		{"may not watch CSRs", own, "certificatesigningrequests", "watch", false},
		{"creates CSRs through the shared role", own, "certificatesigningrequests", "create", false},
		{"reads its cluster through the shared role", own, "managedclusters", "get", false},
		{"may not update its cluster", own, "managedclusters", "update", false},
		{"renews through the shared role", own, "managedclusters/clientcertificates", "renew", false},
		{"without own CSRs may not get CSRs", nil, "certificatesigningrequests", "get", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := allows(clusterRoleRules(tt.ownCSRs), tt.resource, tt.verb)
			if got != tt.want {
				t.Errorf("allows(%s %s) = %v, want %v", tt.verb, tt.resource, got, tt.want)
			}
		})
	}
	for _, r := range clusterRoleRules(own) {
		if !slices.Equal(r.ResourceNames, own) {
			t.Errorf("rule %v reads CSRs beyond the cluster's own", r)
		}
	}
	if rules := clusterRoleRules(nil); len(rules) != 0 {
		t.Errorf("with no own CSRs, the role has rules %v", rules)
	}
}

func TestOwnCSRNames(t *testing.T) {
	at := func(min int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC)) }
	csr := func(name, label, user string, created metav1.Time) certificatesv1.CertificateSigningRequest {
		return certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"open-cluster-management.io/cluster-name": label}, CreationTimestamp: created},
			Spec:       certificatesv1.CertificateSigningRequestSpec{Username: user},
		}
	}
	addonCSR := func(name, addon, user string, created metav1.Time) certificatesv1.CertificateSigningRequest {
		c := csr(name, "c1", user, created)
		c.Labels["open-cluster-management.io/addon-name"] = addon
		return c
	}
	own := "system:open-cluster-management:c1:agent1"
	renewals := func(n, from int) []certificatesv1.CertificateSigningRequest {
		var out []certificatesv1.CertificateSigningRequest
		for i := range n {
			out = append(out, csr(fmt.Sprintf("c1-%d", i), "c1", own, at(from+i)))
		}
		return out
	}
	addonCSRs := func(addon string, n, from int) []certificatesv1.CertificateSigningRequest {
		var out []certificatesv1.CertificateSigningRequest
		for i := range n {
			out = append(out, addonCSR(fmt.Sprintf("addon-c1-%s-%d", addon, i), addon, own, at(from+i)))
		}
		return out
	}
	others := []certificatesv1.CertificateSigningRequest{
		csr("c1-boot", "c1", "system:serviceaccount:open-cluster-management:agent-registration-bootstrap", at(0)),
		csr("c1-foreign", "c1", "system:open-cluster-management:c2:agent2", at(50)),
		csr("c2-x", "c2", "system:open-cluster-management:c1:agent1", at(50)),
		csr("c1-prefix", "c1", "system:open-cluster-management:c10:agent", at(50)),
		addonCSR("addon-c1-foreign", "a", "system:open-cluster-management:c2:agent2", at(50)),
	}
	manyAddons := func() []certificatesv1.CertificateSigningRequest {
		var out []certificatesv1.CertificateSigningRequest
		for i := range 60 {
			out = append(out, addonCSRs(fmt.Sprintf("x%02d", i), 2, 100+2*i)...)
		}
		return out
	}
	// twoSigners is an add-on with a kube-apiserver-client and a custom
	// signer registration that filed two rounds of requests in one second.
	twoSigners := func() []certificatesv1.CertificateSigningRequest {
		var out []certificatesv1.CertificateSigningRequest
		for round := range 2 {
			for _, signer := range []string{"client", "custom"} {
				c := addonCSR(fmt.Sprintf("addon-c1-s-%s-%d", signer, round), "s", own, at(5))
				c.Spec.SignerName = "example.com/" + signer
				out = append(out, c)
			}
		}
		return out
	}
	tests := []struct {
		name string
		csrs []certificatesv1.CertificateSigningRequest
		want func(got []string) error
	}{
		{"newest own renewals, at most five", slices.Concat(others, renewals(6, 2), []certificatesv1.CertificateSigningRequest{csr("c1-new", "c1", own, at(9))}),
			wantNames("c1-new", "c1-5", "c1-4", "c1-3", "c1-2")},
		{"add-on requests do not push renewals out", slices.Concat(renewals(2, 1), addonCSRs("a", 10, 20), addonCSRs("b", 1, 40)),
			wantNames("c1-1", "c1-0", "addon-c1-b-0", "addon-c1-a-9", "addon-c1-a-8", "addon-c1-a-7")},
		{"one add-on does not push another out", slices.Concat(addonCSRs("a", 1, 1), addonCSRs("b", 20, 10)),
			wantNames("addon-c1-b-19", "addon-c1-b-18", "addon-c1-b-17", "addon-c1-a-0")},
		{"requests to two signers filed in one second all stay", twoSigners(),
			wantNames("addon-c1-s-client-0", "addon-c1-s-client-1", "addon-c1-s-custom-0", "addon-c1-s-custom-1")},
		{"add-on requests are bounded in all", slices.Concat(renewals(1, 1), manyAddons()), func(got []string) error {
			if len(got) != 1+maxAddonCSRsTotal || got[0] != "c1-0" {
				return fmt.Errorf("got %d names starting with %v, want the renewal and %d add-on requests", len(got), got[:1], maxAddonCSRsTotal)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.want(ownCSRNames("c1", tt.csrs)); err != nil {
				t.Error(err)
			}
		})
	}
}

// wantNames checks that ownCSRNames returned exactly names, in order.
func wantNames(names ...string) func([]string) error {
	return func(got []string) error {
		if !slices.Equal(got, names) {
			return fmt.Errorf("ownCSRNames = %v, want %v", got, names)
		}
		return nil
	}
}

// allows reports whether rules grant verb on resource.
func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

// TestRBACNamesAndSubjects checks the per-cluster bindings: one subject,
// the cluster's certificate group, for a cluster registered with
// certificates; that and the token identity in identity.AgentTokenNamespace
// for a token-driver cluster. No ServiceAccount of the cluster namespace
// (M6) and no group without the system: prefix (L8) is ever a subject.
func TestRBACNamesAndSubjects(t *testing.T) {
	group := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:open-cluster-management:c1"}
	token := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "open-cluster-management-agent-tokens", Name: "c1"}
	for _, tt := range []struct {
		tokenDriver bool
		want        []rbacv1.Subject
	}{
		{false, []rbacv1.Subject{group}},
		{true, []rbacv1.Subject{group, token}},
	} {
		crb := clusterRoleBinding("c1", tt.tokenDriver)
		if crb.Name != "open-cluster-management:managedcluster:c1" || crb.RoleRef.Name != crb.Name {
			t.Errorf("ClusterRoleBinding %s → %s", crb.Name, crb.RoleRef.Name)
		}
		if !slices.Equal(crb.Subjects, tt.want) {
			t.Errorf("token driver %v: ClusterRoleBinding subjects %+v, want %+v", tt.tokenDriver, crb.Subjects, tt.want)
		}
		rbs := roleBindings("c1", tt.tokenDriver)
		var got []string
		for _, rb := range rbs {
			got = append(got, rb.Namespace+"/"+rb.Name+"→"+rb.RoleRef.Name)
		}
		want := []string{
			"c1/open-cluster-management:managedcluster:c1:registration→open-cluster-management:managedcluster:registration",
			"c1/open-cluster-management:managedcluster:c1:work→open-cluster-management:managedcluster:work",
			// The hub's CA bundle: read in kube-public only, never in the
			// cluster namespace, whose editors may write their copy.
			"kube-public/open-cluster-management:managedcluster:c1:hub-ca-bundle→open-cluster-management:hub-ca-bundle",
		}
		if !slices.Equal(got, want) {
			t.Errorf("RoleBindings %v, want %v", got, want)
		}
		for _, rb := range rbs {
			if !slices.Equal(rb.Subjects, tt.want) {
				t.Errorf("token driver %v: RoleBinding %s subjects %+v, want %+v", tt.tokenDriver, rb.Name, rb.Subjects, tt.want)
			}
		}
	}
	for _, r := range clusterRoleRules([]string{"c1-abcde"}) {
		if slices.Contains(r.Resources, "configmaps") {
			t.Errorf("the cluster's ClusterRole, bound in every namespace, has rule %v on ConfigMaps", r)
		}
	}
	if ns := clusterNamespace("c1"); ns.Labels["open-cluster-management.io/cluster-name"] != "c1" || !podsecurity.EnforcesRestricted(ns.Labels) {
		t.Errorf("namespace labels %v, want the cluster name and the Pod Security labels", ns.Labels)
	}
}

// TestTokenGrants checks the token identity's own Role: it may request
// tokens of, and delete, its own ServiceAccount only, in
// identity.AgentTokenNamespace; its RoleBinding's one subject is that
// identity; both go with the ServiceAccount.
func TestTokenGrants(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.AgentTokenNamespace, Name: "c1", UID: "u1"}}
	role, binding := tokenGrants("c1", sa)
	for _, obj := range []metav1.Object{role, binding} {
		if obj.GetNamespace() != identity.AgentTokenNamespace || obj.GetName() != "open-cluster-management:managedcluster:c1:token" {
			t.Errorf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName())
		}
		if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "ServiceAccount" || refs[0].Name != "c1" || refs[0].UID != "u1" {
			t.Errorf("%T owner references %+v, want ServiceAccount c1", obj, refs)
		}
	}
	if !allows(role.Rules, "serviceaccounts/token", "create") || !allows(role.Rules, "serviceaccounts", "delete") {
		t.Errorf("rules %+v do not let the identity refresh and revoke its token", role.Rules)
	}
	for _, r := range role.Rules {
		if !slices.Equal(r.ResourceNames, []string{"c1"}) {
			t.Errorf("rule %+v is not limited to ServiceAccount c1", r)
		}
		if slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "create" && v != "delete" }) {
			t.Errorf("rule %+v grants more than create and delete", r)
		}
	}
	if want := []rbacv1.Subject{identity.AgentTokenSubject("c1")}; !slices.Equal(binding.Subjects, want) || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding subjects %+v → %+v, want %+v → Role %s", binding.Subjects, binding.RoleRef, want, role.Name)
	}
}

func TestCleanupPriority(t *testing.T) {
	work := func(priority string) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
		if priority != "-" {
			w.Annotations = map[string]string{"open-cluster-management.io/cleanup-priority": priority}
		}
		return w
	}
	tests := []struct {
		priority string
		want     int
	}{{"-", -2}, {"abc", -1}, {"101", -1}, {"0", 0}, {"100", 100}, {"7", 7}}
	for _, tt := range tests {
		if got := cleanupPriority(work(tt.priority)); got != tt.want {
			t.Errorf("cleanupPriority(%q) = %d, want %d", tt.priority, got, tt.want)
		}
	}
}
