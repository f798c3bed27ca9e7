package proxy

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// proxyVerbs are the verbs of managedclusters/proxy, one for each HTTP
// method (hubtunnel.ProxyVerb).
var proxyVerbs = []string{"get", "create", "update", "patch", "delete"}

// grantRoleName names the ClusterRole of GrantScript for cluster.
func grantRoleName(cluster string) string { return "ocm-proxy-" + cluster }

// serviceAccountPrefix starts the user names of ServiceAccounts.
const serviceAccountPrefix = "system:serviceaccount:"

// GrantScript returns the shell commands with which a hub admin lets hub
// user user (HUB_USER when "") use every verb of managedclusters/proxy on
// cluster: kubectl apply of a ClusterRole for the cluster, then the
// ClusterRoleBinding of GrantBinding. (kubectl create clusterrole cannot
// write that role: it looks managedclusters up in the discovery of
// proxy.kubectl-ocm.io, which lists only its subresources.)
func GrantScript(cluster, user string) string {
	return fmt.Sprintf(`kubectl apply -f - <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s
rules:
- apiGroups: [%s]
  resources: [%s/%s]
  resourceNames: [%s]
  verbs: [%s]
EOF
%s`, grantRoleName(cluster), hubtunnel.Group, hubtunnel.Resource, hubtunnel.ProxySubresource, cluster,
		strings.Join(proxyVerbs, ", "), GrantBinding(cluster, user))
}

// GrantBinding returns the kubectl command that binds the ClusterRole of
// GrantScript for cluster to hub user user (HUB_USER when ""), as a
// ServiceAccount when user is one.
func GrantBinding(cluster, user string) string {
	role := grantRoleName(cluster)
	subject, binding := "--user=HUB_USER", role+"-HUB_USER"
	if sa, ok := strings.CutPrefix(user, serviceAccountPrefix); ok && strings.Contains(sa, ":") {
		subject, binding = "--serviceaccount="+shellQuote(sa), shellQuote(role+"-"+objectName(sa))
	} else if user != "" {
		subject, binding = "--user="+shellQuote(user), shellQuote(role+"-"+objectName(user))
	}
	return fmt.Sprintf("kubectl create clusterrolebinding %s --clusterrole=%s %s", binding, role, subject)
}

// notName matches what an object name should not hold.
var notName = regexp.MustCompile(`[^a-z0-9.-]+`)

// objectName turns s into a lowercase name fit for a ClusterRoleBinding.
func objectName(s string) string {
	return cli.NamePrefix(strings.Trim(notName.ReplaceAllString(strings.ToLower(s), "-"), "-."))
}

// plainWord matches what a POSIX shell takes as one word without quotes.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// shellQuote quotes s for a POSIX shell unless it needs no quotes.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
