package framework

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

// The nodes' NetworkPolicy enforcer: kube-network-policies, built by
// `make kube-bins` from the module test/kube/netpol (see its doc), run on
// each node beside kube-proxy with a client certificate of netpolUser, whom
// the ClusterRole netpolUser lets read Pods, namespaces and NetworkPolicies
// and write Events.
const (
	netpolBinary = "kube-network-policies"
	netpolUser   = "system:kube-network-policies"
)

// netpolRules are what the enforcer reads and writes.
var netpolRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// grantNetpol gives netpolUser its rights on the cluster of cs.
func grantNetpol(ctx context.Context, cs kubernetes.Interface) error {
	meta := metav1.ObjectMeta{Name: netpolUser}
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: netpolRules}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the ClusterRole of the NetworkPolicy enforcer: %w", err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: netpolUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: netpolUser}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind the ClusterRole of the NetworkPolicy enforcer: %w", err)
	}
	return nil
}

// writeNetpolCredentials writes the enforcer's kubeconfig: a client
// certificate of netpolUser from the cluster's current client CA.
func (n *node) writeNetpolCredentials() error {
	creds, err := n.c.ca.issue(netpolUser, nil, nil, nil)
	if err != nil {
		return err
	}
	return WriteKubeconfig(n.path(netpolBinary+".kubeconfig"), n.c.Name, n.c.configWith(rest.TLSClientConfig{CertData: creds.certPEM, KeyData: creds.keyPEM}))
}

// startNetpol starts the node's NetworkPolicy enforcer for the node's Pod
// range. Its iptables chain lives in the node's network namespace: the
// enforcer removes it when it stops, and the namespace goes with the node.
func (n *node) startNetpol() (*process.Process, error) {
	return n.run(netpolBinary, n.netpolBin, []string{
		"--kubeconfig=" + n.path(netpolBinary+".kubeconfig"),
		"--hostname-override=" + n.name,
		"--pod-cidr=" + n.net.PodCIDR.String(),
		"--v=1",
	}, n.pathEnv)
}

// waitNetpol waits until the enforcer has read the cluster's policies and
// listens on its queue.
func (n *node) waitNetpol(ctx context.Context) error {
	return n.netpol.WaitFor(ctx, "the NetworkPolicy enforcer of node "+n.name, func(context.Context) (bool, error) {
		return n.netpol.LogContains("Syncing nftables rules"), nil
	})
}
