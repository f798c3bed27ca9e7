package managedcluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestClusterRoleRules(t *testing.T) {
	tests := []struct {
		name     string
		accepted bool
		resource string
		verb     string
		want     bool
	}{
		{"accepted may renew", true, "managedclusters/clientcertificates", "renew", true},
		{"accepted may create CSRs", true, "certificatesigningrequests", "create", true},
		{"accepted may not list CSRs", true, "certificatesigningrequests", "list", false},
		{"accepted may not watch CSRs", true, "certificatesigningrequests", "watch", false},
		{"accepted may update its cluster", true, "managedclusters", "update", true},
		{"accepted may patch its status", true, "managedclusters/status", "patch", true},
		{"accepted may not delete its cluster", true, "managedclusters", "delete", false},
		{"not accepted may read its cluster", false, "managedclusters", "get", true},
		{"not accepted may not update its cluster", false, "managedclusters", "update", false},
		{"not accepted may not renew", false, "managedclusters/clientcertificates", "renew", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := allows(clusterRoleRules("c1", tt.accepted, []string{"c1-abcde"}), tt.resource, tt.verb)
			if got != tt.want {
				t.Errorf("allows(%s %s) = %v, want %v", tt.verb, tt.resource, got, tt.want)
			}
		})
	}
	for _, r := range clusterRoleRules("c1", true, []string{"c1-abcde"}) {
		if slices.Contains(r.Resources, "managedclusters") && !slices.Equal(r.ResourceNames, []string{"c1"}) {
			t.Errorf("rule %v on managedclusters is not limited to the cluster's own name", r)
		}
		if slices.Contains(r.Resources, "certificatesigningrequests") && slices.Contains(r.Verbs, "get") && !slices.Equal(r.ResourceNames, []string{"c1-abcde"}) {
			t.Errorf("rule %v reads CSRs beyond the cluster's own", r)
		}
	}
	if allows(clusterRoleRules("c1", true, nil), "certificatesigningrequests", "get") {
		t.Error("with no own CSRs, the role still allows reading CSRs")
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
	own := "system:open-cluster-management:c1:agent1"
	csrs := []certificatesv1.CertificateSigningRequest{
		csr("c1-boot", "c1", "system:serviceaccount:open-cluster-management:agent-registration-bootstrap", at(0)),
		csr("c1-old", "c1", own, at(1)),
		csr("c1-new", "c1", own, at(9)),
		csr("c1-foreign", "c1", "system:open-cluster-management:c2:agent2", at(5)),
		csr("c2-x", "c2", "system:open-cluster-management:c1:agent1", at(5)),
		csr("c1-prefix", "c1", "system:open-cluster-management:c10:agent", at(5)),
	}
	for i := range 6 {
		csrs = append(csrs, csr(fmt.Sprintf("c1-%d", i), "c1", own, at(2+i)))
	}
	got := ownCSRNames("c1", csrs)
	want := []string{"c1-new", "c1-5", "c1-4", "c1-3", "c1-2"}
	if !slices.Equal(got, want) {
		t.Errorf("ownCSRNames = %v, want %v (newest own renewals, at most %d)", got, want, maxOwnCSRs)
	}
}

// allows reports whether rules grant verb on resource.
func allows(rules []rbacv1.PolicyRule, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func TestRBACNamesAndSubjects(t *testing.T) {
	crb := clusterRoleBinding("c1")
	if crb.Name != "open-cluster-management:managedcluster:c1" || crb.RoleRef.Name != crb.Name {
		t.Errorf("ClusterRoleBinding %s → %s", crb.Name, crb.RoleRef.Name)
	}
	wantGroups := []string{"system:open-cluster-management:c1", "open-cluster-management:c1"}
	for _, s := range crb.Subjects {
		if s.Kind != rbacv1.GroupKind || !slices.Contains(wantGroups, s.Name) {
			t.Errorf("unexpected subject %+v", s)
		}
	}
	rbs := roleBindings("c1")
	got := []string{rbs[0].Name + "→" + rbs[0].RoleRef.Name, rbs[1].Name + "→" + rbs[1].RoleRef.Name}
	want := []string{
		"open-cluster-management:managedcluster:c1:registration→open-cluster-management:managedcluster:registration",
		"open-cluster-management:managedcluster:c1:work→open-cluster-management:managedcluster:work",
	}
	if !slices.Equal(got, want) {
		t.Errorf("RoleBindings %v, want %v", got, want)
	}
	if ns := clusterNamespace("c1"); ns.Labels["open-cluster-management.io/cluster-name"] != "c1" {
		t.Errorf("namespace labels %v", ns.Labels)
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
