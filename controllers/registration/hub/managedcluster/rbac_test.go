package managedcluster

import (
	"slices"
	"testing"

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
		{"accepted may update its cluster", true, "managedclusters", "update", true},
		{"accepted may patch its status", true, "managedclusters/status", "patch", true},
		{"accepted may not delete its cluster", true, "managedclusters", "delete", false},
		{"not accepted may read its cluster", false, "managedclusters", "get", true},
		{"not accepted may not update its cluster", false, "managedclusters", "update", false},
		{"not accepted may not renew", false, "managedclusters/clientcertificates", "renew", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := allows(clusterRoleRules("c1", tt.accepted), tt.resource, tt.verb)
			if got != tt.want {
				t.Errorf("allows(%s %s) = %v, want %v", tt.verb, tt.resource, got, tt.want)
			}
		})
	}
	for _, r := range clusterRoleRules("c1", true) {
		if slices.Contains(r.Resources, "managedclusters") && !slices.Equal(r.ResourceNames, []string{"c1"}) {
			t.Errorf("rule %v on managedclusters is not limited to the cluster's own name", r)
		}
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
