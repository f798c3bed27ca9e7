package hub

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/clitest"
)

// testAcceptWaitsForAutoApproval starts `kubectl ocm accept --wait` for
// cluster5 before its first join, which the hub approves and accepts by
// itself (its requester is in the ClusterManager's autoApproveUsers): accept
// sees the cluster accepted by the hub, says so, and returns as soon as the
// cluster joined, well before its timeout, without blaming the agent.
func testAcceptWaitsForAutoApproval(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client, kubeconfig string) {
	const name = "cluster5"
	bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, "open-cluster-management", "agent-registration-bootstrap", time.Hour)
	boot := clientFor(t, bootCfg, err)
	setAutoApprove(ctx, t, admin, []string{bootstrapSA})
	defer setAutoApprove(ctx, t, admin, nil)
	defer deleteClusterAndWait(ctx, t, admin, name)

	errOut := &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &clitest.SyncBuffer{}, ErrOut: errOut}
		done <- clitest.CLI{Kubeconfig: kubeconfig}.RunWith(ctx, streams, "accept", "--clusters", name, "--wait", "--timeout", "3m")
	}()
	framework.Eventually(ctx, t, pollTimeout, "accept waiting for a request of "+name, func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "Waiting for a certificate request of managed cluster "+name), nil
	})

	// The agent's first join: its ManagedCluster and its request, which the
	// hub approves and accepts by itself.
	createCluster(ctx, t, admin, name, false, 0)
	waitApproved(ctx, t, admin, createCSR(ctx, t, boot, name, name))
	waitCluster(ctx, t, admin, name, "accepted by the hub", func(mc *clusterv1.ManagedCluster) bool { return mc.Spec.HubAcceptsClient })
	// The agent joins, as its registration reports (the hub may be writing
	// the cluster's status at the same time).
	reportJoined(ctx, t, admin, name)

	var r clitest.Result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("accept --wait did not return: %v\n%s", ctx.Err(), errOut.String())
	}
	if r.Err != nil {
		t.Fatalf("accept --wait failed on a cluster the hub accepted: %v\nstderr:\n%s", r.Err, r.ErrOut)
	}
	for _, want := range []string{"was accepted by the hub's auto-approval of its identity while this command waited"} {
		if !strings.Contains(r.ErrOut, want) {
			t.Errorf("accept's stderr lacks %q:\n%s", want, r.ErrOut)
		}
	}
	if !strings.Contains(r.Out, "Your managed cluster "+name+" has joined the Hub successfully.") {
		t.Errorf("accept did not say the cluster joined:\n%s", r.Out)
	}
	if strings.Contains(r.ErrOut, "out of the hub's sight") {
		t.Errorf("accept blamed the agent:\n%s", r.ErrOut)
	}
}

// testForeignNamespaceKeepsLabels accepts cluster6, whose namespace someone
// created before the cluster registered, labeled to enforce Pod Security
// level privileged: the hub grants the cluster's agent its rights there but
// leaves the namespace as it is, its Pod Security labels above all, rather
// than tighten a namespace it did not create. cluster7's namespace, which
// the hub creates, enforces restricted and names the hub as its setter.
func testForeignNamespaceKeepsLabels(ctx context.Context, t *testing.T, admin client.Client) {
	foreign := map[string]string{"team": "payments", podsecurity.EnforceLabel: "privileged"}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster6", Labels: foreign}}
	expectAllowed(t, "create namespace cluster6", admin.Create(ctx, ns))
	createCluster(ctx, t, admin, "cluster6", true, 0)
	createCluster(ctx, t, admin, "cluster7", true, 0)
	defer deleteClusterAndWait(ctx, t, admin, "cluster7")
	defer deleteClusterAndWait(ctx, t, admin, "cluster6")
	for _, c := range []string{"cluster6", "cluster7"} {
		waitCluster(ctx, t, admin, c, "HubAccepted True", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		framework.Eventually(ctx, t, pollTimeout, "the registration RoleBinding in namespace "+c, func(ctx context.Context) (bool, error) {
			err := admin.Get(ctx, client.ObjectKey{Namespace: c, Name: "open-cluster-management:managedcluster:" + c + ":registration"}, &rbacv1.RoleBinding{})
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	expectAllowed(t, "get namespace cluster6", admin.Get(ctx, client.ObjectKey{Name: "cluster6"}, ns))
	if !maps.Equal(ns.Labels, labels.Merge(foreign, map[string]string{corev1.LabelMetadataName: "cluster6"})) {
		t.Errorf("the hub changed the labels of namespace cluster6, which it did not create: %v, want %v", ns.Labels, foreign)
	}
	if by, ok := ns.Annotations[podsecurity.SetByAnnotation]; ok {
		t.Errorf("namespace cluster6 has annotation %s=%s", podsecurity.SetByAnnotation, by)
	}
	own := &corev1.Namespace{}
	expectAllowed(t, "get namespace cluster7", admin.Get(ctx, client.ObjectKey{Name: "cluster7"}, own))
	if !podsecurity.EnforcesRestricted(own.Labels) || own.Annotations[podsecurity.SetByAnnotation] != podsecurity.SetByHub {
		t.Errorf("namespace cluster7, which the hub created, has labels %v and annotations %v", own.Labels, own.Annotations)
	}
}
