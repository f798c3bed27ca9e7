package hub

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	// pollTimeout bounds every wait for the controller to act.
	pollTimeout = 60 * time.Second
	// bootstrapSA is the bootstrap ServiceAccount's user name.
	bootstrapSA = "system:serviceaccount:open-cluster-management:agent-registration-bootstrap"
	// managedClustersGroup is the group of every agent certificate.
	managedClustersGroup = "system:open-cluster-management:managed-clusters"
)

// startController runs the hub controllers in-process as the shipped
// ServiceAccount and returns a function that stops them and waits.
func startController(t *testing.T, cluster *framework.Cluster, opts hub.Options) (stop func()) {
	t.Helper()
	return hubtest.RunControllers(t, cluster, 2, func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, opts) })
}

// clientFor returns a client with the project's scheme for cfg.
func clientFor(t *testing.T, cfg *rest.Config, err error) client.Client {
	t.Helper()
	if err != nil {
		t.Fatalf("client configuration: %v", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	return c
}

// agentClient acts as agent "agent1" of cluster with a client certificate.
func agentClient(t *testing.T, hubCluster *framework.Cluster, cluster string) client.Client {
	t.Helper()
	cfg, err := hubCluster.ConfigForUser(agentUser(cluster), "system:open-cluster-management:"+cluster, managedClustersGroup)
	return clientFor(t, cfg, err)
}

// agentUser is the certificate identity of agent1 of cluster.
func agentUser(cluster string) string { return "system:open-cluster-management:" + cluster + ":agent1" }

// waitCluster waits until the ManagedCluster name satisfies ok and returns it.
func waitCluster(ctx context.Context, t *testing.T, c client.Client, name, what string, ok func(*clusterv1.ManagedCluster) bool) *clusterv1.ManagedCluster {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("managed cluster %s: %s", name, what), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, err
		}
		return ok(mc), nil
	})
	return mc
}

// hasCondition returns a check that the condition typ has status and reason.
func hasCondition(typ string, status metav1.ConditionStatus, reason string) func(*clusterv1.ManagedCluster) bool {
	return func(mc *clusterv1.ManagedCluster) bool {
		c := meta.FindStatusCondition(mc.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason
	}
}

// createCluster creates a ManagedCluster as the admin.
func createCluster(ctx context.Context, t *testing.T, c client.Client, name string, accept bool, leaseSeconds int32) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: accept, LeaseDurationSeconds: leaseSeconds},
	}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatalf("create managed cluster %s: %v", name, err)
	}
}

// setAccept sets spec.hubAcceptsClient as c's user.
func setAccept(ctx context.Context, c client.Client, name string, accept bool) error {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return err
	}
	base := mc.DeepCopy()
	mc.Spec.HubAcceptsClient = accept
	return c.Patch(ctx, mc, client.MergeFrom(base))
}

// expectForbidden fails t unless err is a 403.
func expectForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want 403 Forbidden", what, err)
	}
}

// expectAllowed fails t if err is not nil.
func expectAllowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// csrPEM returns a PEM certificate request for cn in orgs.
func csrPEM(t *testing.T, cn string, orgs ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// createCSR creates an agent CSR labeled with cluster as c's user, with the
// subject of agent1 of subjectCluster, and returns its name.
func createCSR(ctx context.Context, t *testing.T, c client.Client, cluster, subjectCluster string) string {
	t.Helper()
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cluster + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabelKey: cluster},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    csrPEM(t, agentUser(subjectCluster), "system:open-cluster-management:"+subjectCluster, managedClustersGroup),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     csr.AgentUsages(),
		},
	}
	if err := c.Create(ctx, csr); err != nil {
		t.Fatalf("create CSR for %s: %v", cluster, err)
	}
	return csr.Name
}

// csrApproval returns the reason of the Approved condition of the CSR name,
// or "" while it is pending.
func csrApproval(ctx context.Context, c client.Client, name string) (string, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
		return "", err
	}
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return cond.Reason, nil
		}
	}
	return "", nil
}

// waitApproved waits until the CSR name is approved by the hub controller.
func waitApproved(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "CSR "+name+" approved", func(ctx context.Context) (bool, error) {
		reason, err := csrApproval(ctx, c, name)
		if reason != "" && reason != "AutoApprovedByHubCSRApprovingController" {
			return false, errors.New("approved with reason " + reason)
		}
		return reason != "", err
	})
}

// expectPending fails t unless the CSR name is still pending.
func expectPending(ctx context.Context, t *testing.T, c client.Client, name, why string) {
	t.Helper()
	reason, err := csrApproval(ctx, c, name)
	if err != nil {
		t.Fatalf("get CSR %s: %v", name, err)
	}
	if reason != "" {
		t.Errorf("CSR %s (%s) was approved (%s); want it left pending", name, why, reason)
	}
}

// reportJoined sets the ManagedClusterJoined condition of cluster, as its
// registration agent does once it holds a hub credential.
func reportJoined(ctx context.Context, t *testing.T, admin client.Client, cluster string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue,
			Reason: "ManagedClusterJoined", Message: "the agent holds a hub credential"})
		return admin.Status().Update(ctx, mc)
	}); err != nil {
		t.Fatalf("report %s joined: %v", cluster, err)
	}
}

// eventsOf lists the Events with reason regarding the object that regarding
// accepts.
func eventsOf(ctx context.Context, admin client.Client, reason string, regarding func(corev1.ObjectReference) bool) ([]eventsv1.Event, error) {
	events := &eventsv1.EventList{}
	if err := admin.List(ctx, events, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(events.Items, func(e eventsv1.Event) bool { return e.Reason != reason || !regarding(e.Regarding) }), nil
}

// waitEvent waits for an event on ManagedCluster cluster with reason whose
// note says says.
func waitEvent(ctx context.Context, t *testing.T, admin client.Client, cluster, reason, says string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "event "+reason+" on ManagedCluster "+cluster, func(ctx context.Context) (bool, error) {
		events, err := eventsOf(ctx, admin, reason, func(r corev1.ObjectReference) bool { return r.Name == cluster })
		return slices.ContainsFunc(events, func(e eventsv1.Event) bool { return strings.Contains(e.Note, says) }), err
	})
}

// expectRecordedOnce waits until ManagedCluster mc has an Event with reason
// saying each of notes (one Event for each, a note given twice needs two),
// then fails t when any of them is a series or two in a row say the same:
// each change recorded more than once. A change the cluster made again
// later (a flapping lease) is another Event between them and passes.
func expectRecordedOnce(ctx context.Context, t *testing.T, admin client.Client, mc *clusterv1.ManagedCluster, reason string, notes ...string) {
	t.Helper()
	var recorded []eventsv1.Event
	framework.Eventually(ctx, t, pollTimeout, reason+" events of "+mc.Name+" saying each of "+strings.Join(notes, "; "), func(ctx context.Context) (bool, error) {
		var err error
		if recorded, err = eventsOf(ctx, admin, reason, func(r corev1.ObjectReference) bool { return r.UID == mc.UID }); err != nil {
			return false, err
		}
		unmatched := slices.Clone(recorded)
		for _, note := range notes {
			i := slices.IndexFunc(unmatched, func(e eventsv1.Event) bool { return strings.Contains(e.Note, note) })
			if i < 0 {
				return false, nil
			}
			unmatched = slices.Delete(unmatched, i, i+1)
		}
		return true, nil
	})
	slices.SortFunc(recorded, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	for i, e := range recorded {
		if e.Series != nil {
			t.Errorf("%s of %s recorded %d times: %q", reason, mc.Name, e.Series.Count, e.Note)
		}
		if i > 0 && recorded[i-1].Note == e.Note {
			t.Errorf("%s of %s recorded twice in a row: %q", reason, mc.Name, e.Note)
		}
	}
}
