package hub

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// agentKeyBinding has the hub accept cluster-n automatically for the
// first join of the shared bootstrap identity, then deletes that approved
// request, as kube-controller-manager does about an hour after approval, and
// files, with the same token, requests for cluster-n: under the freed name
// with another key and the agent's subject in each form of its
// organizations, and under another name with another key. The hub approves
// none of them; it approves the agent's own key under any name, moves the
// key on record to that of the agent's renewal, and then no longer takes
// the old key. `accept --rejoin` shows the key on record beside each
// request's and records the key of the one it approves. Each request left
// pending is checked after the hub approved a first join filed after it.
func (fx *bootstrapFixture) agentKeyBinding(t *testing.T) {
	ctx, hubCluster, admin, boot, ocm := fx.ctx, fx.hub, fx.admin, fx.boot, fx.ocm
	const cluster, joinName = "cluster-n", "cluster-n-join"
	setAutoApprove(ctx, t, admin, []string{identity.BootstrapUser})
	defer setAutoApprove(ctx, t, admin, nil)
	newKey := func() (*ecdsa.PrivateKey, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pin, err := certs.KeyPin(key.Public())
		if err != nil {
			t.Fatal(err)
		}
		return key, pin
	}
	// spec is cluster-n's agent request named name (generated when empty)
	// with key.
	spec := func(name string, key crypto.Signer) csrSpec {
		s := agentCSR(cluster)
		s.name, s.key = name, key
		return s
	}
	// seen returns once the hub approved the first join of a new cluster,
	// filed after every request before it.
	sentinels := 0
	seen := func() {
		t.Helper()
		sentinels++
		name := fmt.Sprintf("cluster-n-sentinel%d", sentinels)
		if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("register %s with the shared bootstrap token: %v", name, err)
		}
		waitApproved(ctx, t, admin, mustFileCSR(ctx, t, boot, agentCSR(name)))
	}
	// remove deletes the request name and waits until it is gone.
	remove := func(name string) {
		t.Helper()
		if err := admin.Delete(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("delete CSR %s: %v", name, err)
		}
		framework.Eventually(ctx, t, pollTimeout, "CSR "+name+" gone", func(ctx context.Context) (bool, error) {
			err := admin.Get(ctx, client.ObjectKey{Name: name}, &certificatesv1.CertificateSigningRequest{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	// recorded returns cluster-n's annotations, once it is accepted.
	recorded := func(what string, ok func(map[string]string) bool) map[string]string {
		t.Helper()
		mc := waitCluster(ctx, t, admin, cluster, what, func(mc *clusterv1.ManagedCluster) bool {
			return mc.Spec.HubAcceptsClient && mc.IsAccepted() && ok(mc.Annotations)
		})
		return mc.Annotations
	}

	// The first join, auto-approved: it accepts cluster-n and records the
	// request's UID and key.
	agentKey, agentPin := newKey()
	if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
		t.Fatalf("register %s with the shared bootstrap token: %v", cluster, err)
	}
	mustFileCSR(ctx, t, boot, spec(joinName, agentKey))
	waitApproved(ctx, t, admin, joinName)
	waitIssued(ctx, t, admin, joinName)
	join := &certificatesv1.CertificateSigningRequest{}
	if err := admin.Get(ctx, client.ObjectKey{Name: joinName}, join); err != nil {
		t.Fatal(err)
	}
	annotations := recorded("accepted automatically", func(a map[string]string) bool { return a[clusterv1.AgentKeyAnnotationKey] != "" })
	if got := annotations[clusterv1.AutomaticallyAcceptedForAnnotationKey]; got != string(join.UID) {
		t.Errorf("annotation %s = %q, want the UID %s of the request that accepted the cluster", clusterv1.AutomaticallyAcceptedForAnnotationKey, got, join.UID)
	}
	if got := annotations[clusterv1.AgentKeyAnnotationKey]; got != agentPin {
		t.Errorf("annotation %s = %q, want the key of the request that accepted the cluster, %s", clusterv1.AgentKeyAnnotationKey, got, agentPin)
	}

	// The attack: the approved request is gone, and the token holder files
	// a new one under its name with another key, in every form of the
	// agent's organizations, and one under another name.
	remove(joinName)
	squatKey, squatPin := newKey()
	var elsewhere string
	for i, orgs := range [][]string{
		{identity.ClusterGroup(cluster), identity.ManagedClustersGroup},
		{identity.ManagedClustersGroup, identity.ClusterGroup(cluster)},
		{identity.ClusterGroup(cluster)},
	} {
		s := spec(joinName, squatKey)
		s.orgs = orgs
		mustFileCSR(ctx, t, boot, s)
		if i == 0 {
			elsewhere = mustFileCSR(ctx, t, boot, spec("", squatKey))
		}
		seen()
		expectPending(ctx, t, admin, joinName, fmt.Sprintf("the name of the request that accepted the cluster, another key, organizations %v", orgs))
		remove(joinName)
	}
	expectPending(ctx, t, admin, elsewhere, "another name, another key")

	// The agent registering again with its own key (its certificate
	// expired) needs no administrator.
	waitApproved(ctx, t, admin, mustFileCSR(ctx, t, boot, spec("", agentKey)))

	// Its renewal proves the current credential: its key is the agent's
	// from then on, and the old key no longer registers the cluster.
	renewKey, renewPin := newKey()
	renewal := agentCSR(cluster)
	renewal.key = renewKey
	waitApproved(ctx, t, admin, mustFileCSR(ctx, t, agentClient(t, hubCluster, cluster), renewal))
	recorded("the renewal's key on record", func(a map[string]string) bool { return a[clusterv1.AgentKeyAnnotationKey] == renewPin })
	oldKey := mustFileCSR(ctx, t, boot, spec("", agentKey))
	seen()
	expectPending(ctx, t, admin, oldKey, "the agent's key before its renewal")

	// The administrator compares the keys: accept shows the one on record
	// beside each request's, and records the key of the request it approves.
	reportJoined(ctx, t, admin, cluster)
	r := ocm.Run(ctx, "accept", "--clusters", cluster, "--rejoin")
	clitest.ExpectErr(t, r, "CSR "+oldKey+": requester "+identity.BootstrapUser, "key "+agentPin+", not the key of the agent on record "+renewPin,
		"CSR "+elsewhere+": requester", "key "+squatPin+", not the key of the agent on record "+renewPin)
	if want := "Managed cluster " + cluster + ": the key of its agent on record is " + renewPin; !strings.Contains(r.ErrOut, want) {
		t.Errorf("accept --rejoin did not show the key on record (%q):\n%s", want, r.ErrOut)
	}
	r = ocm.Run(ctx, "accept", "--clusters", cluster, "--rejoin", "--csr", elsewhere)
	clitest.ExpectOK(t, r, "CSR "+elsewhere+" approved", "key "+squatPin+", not the key of the agent on record "+renewPin,
		"recorded key "+squatPin+" as the key of the agent of managed cluster "+cluster)
	recorded("the key accept approved on record", func(a map[string]string) bool { return a[clusterv1.AgentKeyAnnotationKey] == squatPin })
	expectPending(ctx, t, admin, oldKey, "the request accept --csr did not name")
}
