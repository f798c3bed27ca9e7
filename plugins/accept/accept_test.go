package accept

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		timeout  time.Duration
		dryRun   string
		wait     bool
		wantErr  bool
	}{
		{"one cluster", []string{"cluster1"}, time.Minute, "none", false, false},
		{"duplicates and blanks are dropped", []string{"c1", " c1", ""}, time.Minute, "none", false, false},
		{"no cluster", nil, time.Minute, "none", false, true},
		{"invalid name", []string{"Cluster_1"}, time.Minute, "none", false, true},
		{"reserved name", []string{"managed-clusters"}, time.Minute, "none", false, true},
		{"zero timeout", []string{"c1"}, 0, "none", false, true},
		{"client dry run", []string{"c1"}, time.Minute, "client", false, false},
		{"server dry run", []string{"c1"}, time.Minute, "server", false, false},
		{"unknown dry run", []string{"c1"}, time.Minute, "yes", false, true},
		{"dry run and wait", []string{"c1"}, time.Minute, "client", true, true},
		{"wait", []string{"c1"}, time.Minute, "none", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Clusters, o.Timeout, o.DryRun, o.Wait = tt.clusters, tt.timeout, tt.dryRun, tt.wait
			if err := o.Complete(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

func TestRecordAcceptance(t *testing.T) {
	at := time.Date(2026, 11, 27, 1, 2, 3, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name        string
		user        string
		annotations map[string]string
		want        map[string]string
	}{
		{name: "user known", user: "alice",
			want: map[string]string{AcceptedByAnnotation: "alice", AcceptedAtAnnotation: "2026-11-27T00:02:03Z"}},
		{name: "user unknown", want: map[string]string{AcceptedAtAnnotation: "2026-11-27T00:02:03Z"}},
		{name: "other annotations kept", user: "system:admin", annotations: map[string]string{"a": "b"},
			want: map[string]string{"a": "b", AcceptedByAnnotation: "system:admin", AcceptedAtAnnotation: "2026-11-27T00:02:03Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Annotations: tt.annotations}}
			(&Options{acceptedBy: tt.user}).recordAcceptance(mc, at)
			assert.Equal(t, tt.want, mc.Annotations)
		})
	}
}

func TestKeyComparison(t *testing.T) {
	mine, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	theirs, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	recorded, err := certs.KeyPin(mine.Public())
	require.NoError(t, err)
	other, err := certs.KeyPin(theirs.Public())
	require.NoError(t, err)
	req := func(k *ecdsa.PrivateKey) csr.Request {
		return csr.Request{CommonName: identity.AgentUserName("c1", "agent1"), PublicKey: k.Public()}
	}

	assert.Equal(t, "agent id agent1, key "+recorded, describeKey(req(mine), ""), "no key on record")
	assert.Equal(t, "agent id agent1, key "+recorded+", the key of the agent on record", describeKey(req(mine), recorded))
	assert.Equal(t, "agent id agent1, key "+other+", not the key of the agent on record "+recorded, describeKey(req(theirs), recorded))
	assert.Empty(t, compareKey(req(theirs), ""), "no key on record")
	assert.Empty(t, compareKey(csr.Request{}, recorded), "a request without a key")
	assert.Contains(t, compareKey(req(mine), recorded), "is the key of the agent on record")
	assert.Contains(t, compareKey(req(theirs), recorded), other+" is not the key of the agent on record, "+recorded)

	o := &Options{approvedKeys: map[string][]string{"one": {recorded}, "two": {recorded, other}}}
	for name, want := range map[string]struct {
		key    string
		record bool
	}{"none": {"", false}, "one": {recorded, true}, "two": {"", true}} {
		key, record := o.agentKey(name)
		assert.Equal(t, want.key, key, name)
		assert.Equal(t, want.record, record, name)
	}
}

func TestHubApprovalLeavesItsTurn(t *testing.T) {
	const auto, other = "system:serviceaccount:open-cluster-management:agent-registration-bootstrap", "system:bootstrap:abcdef"
	t0 := time.Unix(1000, 0)
	h := &hubApproval{users: []string{auto}, seen: map[string]time.Time{}}

	leave, say := h.leave("c1-a", other, t0)
	assert.False(t, leave, "a requester the hub does not auto-approve is accept's")
	assert.Empty(t, say)

	leave, say = h.leave("c1-b", auto, t0)
	assert.True(t, leave, "the hub's turn starts when accept first sees the request")
	assert.Contains(t, say, "CSR c1-b is the hub's to approve")
	assert.Contains(t, say, auto)
	leave, say = h.leave("c1-b", auto, t0.Add(hubTurn-time.Second))
	assert.True(t, leave, "still the hub's turn")
	assert.Empty(t, say, "said once")
	leave, _ = h.leave("c1-b", auto, t0.Add(hubTurn))
	assert.False(t, leave, "the hub's turn is over: accept approves it")

	var none *hubApproval
	leave, _ = none.leave("c1-c", auto, t0)
	assert.False(t, leave, "outside the wait, accept approves at once")
	leave, _ = (&hubApproval{}).leave("c1-d", auto, t0)
	assert.False(t, leave, "no ClusterManager read: accept approves at once")
}
