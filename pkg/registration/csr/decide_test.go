package csr

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// TestDecideRegistration decides on requests of the auto-approved shared
// bootstrap identity for cluster1, as stored: a cluster's identity is its
// agent's key, never the name of a request, which its creator chooses and
// kube-controller-manager frees about an hour after approval.
func TestDecideRegistration(t *testing.T) {
	other := mustKey(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	agentKey, err := certs.KeyPin(p256.Public())
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := certs.KeyPin(other.Public())
	const acceptedBy = "7c0f3c55-6a43-4c8e-9b59-1d2f6c1a0e01" // the UID of the request that accepted cluster1
	on, forKey, keyKey := clusterv1.AutomaticallyAcceptedOnAnnotationKey, clusterv1.AutomaticallyAcceptedForAnnotationKey, clusterv1.AgentKeyAnnotationKey
	const at = "2026-11-26T12:00:00Z"

	// cluster returns cluster1 with annotations (key, value, ...),
	// accepted (spec and condition) when accepts is set.
	cluster := func(accepts bool, annotations ...string) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1", Annotations: map[string]string{}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepts}}
		for i := 0; i+1 < len(annotations); i += 2 {
			mc.Annotations[annotations[i]] = annotations[i+1]
		}
		if accepts {
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}}
		}
		return mc
	}
	autoAccepted := cluster(true, on, at, forKey, acceptedBy, keyKey, agentKey)
	// req is a request named name with UID uid and the key of signer.
	req := func(name, uid string, signer *ecdsa.PrivateKey) Request {
		return with(request("cluster1", "cluster1", bootstrap), func(r *Request) {
			r.Name, r.RequestUID, r.PublicKey = name, uid, signer.Public()
		})
	}
	tests := []struct {
		name string
		mc   *clusterv1.ManagedCluster
		req  Request
		want Action
		why  []string
	}{
		{"first join of a cluster never accepted", cluster(false), req("csr-1", "uid-1", p256), Approve, []string{"first join"}},
		{"first join of a cluster not registered yet", nil, req("csr-1", "uid-1", p256), Approve, []string{"first join"}},
		{"a retry of the request that accepted the cluster", autoAccepted, req("csr-1", acceptedBy, p256), Approve, []string{"the request that accepted cluster cluster1"}},
		{"a retry of the request that accepted the cluster, denied since", cluster(false, on, at, forKey, acceptedBy, keyKey, agentKey), req("csr-1", acceptedBy, p256), Approve, []string{"the request that accepted"}},
		{"a new request reusing the name of the one that accepted the cluster, another key", autoAccepted, req("csr-1", "uid-2", other), LeavePending,
			[]string{"key " + otherKey, "not the key of its agent (" + agentKey + ")", "kubectl ocm accept --clusters cluster1 --rejoin"}},
		{"a new request reusing the name, the agent's key", autoAccepted, req("csr-1", "uid-2", p256), Approve, []string{"key of its agent on record, " + agentKey}},
		{"another name, another key", autoAccepted, req("squat", "uid-3", other), LeavePending, []string{"not the key of its agent"}},
		{"another name, the agent's key", autoAccepted, req("csr-2", "uid-3", p256), Approve, []string{"key of its agent on record"}},
		{"the agent's key, cluster denied since", cluster(false, on, at, forKey, acceptedBy, keyKey, agentKey), req("csr-2", "uid-3", p256), LeavePending,
			[]string{"cluster cluster1 is not accepted now", "--rejoin"}},
		{"the agent's key, cluster accepted but not yet reported", with0(cluster(true, keyKey, agentKey), func(mc *clusterv1.ManagedCluster) { mc.Status.Conditions = nil }),
			req("csr-2", "uid-3", p256), LeavePending, []string{"not accepted now"}},
		{"the agent's key, cluster accepted by an administrator", cluster(true, keyKey, agentKey), req("csr-2", "uid-3", p256), Approve, []string{"key of its agent on record"}},
		{"another key, cluster accepted by an administrator", cluster(true, keyKey, agentKey), req("csr-2", "uid-3", other), LeavePending, []string{"not the key of its agent"}},
		{"accepted by an administrator, no key on record", cluster(true), req("csr-2", "uid-3", p256), LeavePending, []string{"(none on record)", "--rejoin"}},
		// A hub before this one recorded the request's name, and no key.
		{"old-format annotation, the request of that name", cluster(true, on, at, forKey, "csr-1"), req("csr-1", "uid-2", p256), LeavePending, []string{"none on record"}},
		{"old-format annotation, a UID equal to nothing recorded", cluster(true, on, at, forKey, "csr-1"), req("csr-1", "", p256), LeavePending, []string{"none on record"}},
		{"accepted automatically, no request recorded, a request without UID", cluster(true, on, at), req("csr-1", "", other), LeavePending, []string{"none on record"}},
		{"a key x509 cannot encode, against a record of no pin", cluster(true, keyKey, "unknown"), with(req("csr-2", "uid-3", p256), func(r *Request) { r.PublicKey = struct{}{} }), LeavePending, []string{"key type"}},
		{"token driver, the agent's sealing key", cluster(true, keyKey, agentKey), with(req("csr-2", "uid-3", p256), func(r *Request) { r.SignerName = certs.AgentTokenSignerName }), Approve, []string{"key of its agent on record"}},
		{"token driver, another sealing key", cluster(true, keyKey, agentKey), with(req("csr-2", "uid-3", other), func(r *Request) { r.SignerName = certs.AgentTokenSignerName }), LeavePending, []string{"not the key of its agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := FactsOf(tt.mc)
			facts.AutoApproveUsers = []string{bootstrap}
			got, why := Decide(tt.req, facts)
			if got != tt.want {
				t.Errorf("Decide = %s (%s), want %s", got, why, tt.want)
			}
			for _, w := range tt.why {
				if !strings.Contains(why, w) {
					t.Errorf("Decide's reason %q lacks %q", why, w)
				}
			}
		})
	}
}

// with0 returns mc changed by edit.
func with0(mc *clusterv1.ManagedCluster, edit func(*clusterv1.ManagedCluster)) *clusterv1.ManagedCluster {
	edit(mc)
	return mc
}

// TestRenewalKeepsItsRule checks that the agent's own renewals are decided
// as before whatever key is on record: the hub moves the record to their
// key once it approves them.
func TestRenewalKeepsItsRule(t *testing.T) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1", Annotations: map[string]string{clusterv1.AgentKeyAnnotationKey: "sha256:00"}},
		Spec:   clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}}}}
	got, why := Decide(request("cluster1", "cluster1", agent1), FactsOf(mc))
	assert.Equal(t, ApproveIfAuthorized, got, why)
	// Another agent id of the same cluster is no renewal.
	got, why = Decide(request("cluster1", "cluster1", identity.AgentUserName("cluster1", "agent2")), FactsOf(mc))
	assert.Equal(t, LeavePending, got, why)
}

func TestFactsOf(t *testing.T) {
	accepted := []metav1.Condition{{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}}
	now := metav1.Now()
	tests := []struct {
		name string
		mc   *clusterv1.ManagedCluster
		want Facts
	}{
		{"no cluster", nil, Facts{}},
		{"never accepted", &clusterv1.ManagedCluster{}, Facts{}},
		{"accepted by an administrator, not yet reported", &clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}, Facts{AcceptedBefore: true}},
		{"accepted and reported", &clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}, Status: clusterv1.ManagedClusterStatus{Conditions: accepted}},
			Facts{AcceptedBefore: true, ClusterAccepted: true}},
		{"being deleted", &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
			Status: clusterv1.ManagedClusterStatus{Conditions: accepted}}, Facts{AcceptedBefore: true}},
		{"accepted automatically, denied since", &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			clusterv1.AutomaticallyAcceptedOnAnnotationKey: "2026-11-26T12:00:00Z", clusterv1.AutomaticallyAcceptedForAnnotationKey: "uid-1", clusterv1.AgentKeyAnnotationKey: "sha256:aa"}}},
			Facts{AcceptedBefore: true, AcceptedFor: "uid-1", AgentKey: "sha256:aa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FactsOf(tt.mc))
		})
	}
}

func TestSetAgentKey(t *testing.T) {
	mc := &clusterv1.ManagedCluster{}
	assert.False(t, SetAgentKey(mc, ""), "removing no record")
	assert.True(t, SetAgentKey(mc, "sha256:aa"), "a first record")
	assert.Equal(t, "sha256:aa", AgentKey(mc))
	assert.False(t, SetAgentKey(mc, "sha256:aa"), "the same key again")
	assert.True(t, SetAgentKey(mc, "sha256:bb"), "another key")
	assert.Equal(t, "sha256:bb", AgentKey(mc))
	assert.True(t, SetAgentKey(mc, ""), "removing the record")
	_, set := mc.Annotations[clusterv1.AgentKeyAnnotationKey]
	assert.False(t, set, "the record removed")
	mc.Annotations[clusterv1.AgentKeyAnnotationKey] = ""
	assert.True(t, SetAgentKey(mc, ""), "removing an empty record")
}
