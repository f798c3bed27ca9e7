package hub

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestConnLimiter(t *testing.T) {
	l := newConnLimiter(3, 2)
	a1, err := l.acquire("cluster1", "alice")
	require.NoError(t, err)
	a2, err := l.acquire("cluster2", "alice")
	require.NoError(t, err)
	_, err = l.acquire("cluster1", "alice")
	require.ErrorContains(t, err, `user "alice" has 2 proxied connections open`)
	b1, err := l.acquire("cluster1", "bob")
	require.NoError(t, err)
	b2, err := l.acquire("cluster1", "bob")
	require.NoError(t, err)
	_, err = l.acquire("cluster1", "carol")
	require.ErrorContains(t, err, "cluster cluster1 has 3 proxied connections open")
	// A refused request holds nothing.
	assert.Equal(t, map[string]int{"cluster1": 3, "cluster2": 1}, l.byCluster)
	// Releasing twice releases once.
	b1()
	b1()
	c1, err := l.acquire("cluster1", "carol")
	require.NoError(t, err)
	for _, release := range []func(){a1, a2, b2, c1} {
		release()
	}
	assert.Empty(t, l.byCluster)
	assert.Empty(t, l.byUser)
}

func TestClusterRefusal(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		mc   clusterv1.ManagedCluster
		want string
	}{
		{"accepted", clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}, ""},
		{"denied", clusterv1.ManagedCluster{}, "spec.hubAcceptsClient is false"},
		{"being deleted", clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "c", DeletionTimestamp: &now, Finalizers: []string{"f"}},
			Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		}, "ManagedCluster c is being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clusterRefusal(&tt.mc)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.want)
		})
	}
}

// TestDecisionKey checks that an answer is reused only for the same
// question: every field of the review, extra included, is in its key.
func TestDecisionKey(t *testing.T) {
	base := &caller{user: "alice", uid: "1", groups: []string{"devs"}, extra: map[string][]string{"scopes": {"read"}}}
	key := func(c *caller, verb, cluster string) string {
		k, err := decisionKey(reviewSpec(c, verb, "proxy", cluster))
		require.NoError(t, err)
		return k
	}
	same := &caller{user: "alice", uid: "1", groups: []string{"devs"}, extra: map[string][]string{"scopes": {"read"}}}
	assert.Equal(t, key(base, "get", "c1"), key(same, "get", "c1"))
	for name, c := range map[string]*caller{
		"no extra":      {user: "alice", uid: "1", groups: []string{"devs"}},
		"other extra":   {user: "alice", uid: "1", groups: []string{"devs"}, extra: map[string][]string{"scopes": {"write"}}},
		"other uid":     {user: "alice", uid: "2", groups: []string{"devs"}, extra: base.extra},
		"other groups":  {user: "alice", uid: "1", groups: []string{"admins"}, extra: base.extra},
		"other user":    {user: "bob", uid: "1", groups: []string{"devs"}, extra: base.extra},
		"group as user": {user: "alice\x00devs", uid: "1", extra: base.extra},
	} {
		assert.NotEqual(t, key(base, "get", "c1"), key(c, "get", "c1"), name)
	}
	assert.NotEqual(t, key(base, "get", "c1"), key(base, "create", "c1"))
	assert.NotEqual(t, key(base, "get", "c1"), key(base, "get", "c2"))
}

func TestLimitsValidate(t *testing.T) {
	require.NoError(t, DefaultLimits().Validate())
	require.NoError(t, Limits{}.Validate())
	assert.ErrorContains(t, Limits{ConnectionsPerUser: -1}.Validate(), "must be positive")
	assert.ErrorContains(t, Limits{Lifetime: time.Second}.Validate(), "shorter than a minute")
	got := Limits{ConnectionsPerCluster: 7}.withDefaults()
	assert.Equal(t, 7, got.ConnectionsPerCluster)
	assert.Equal(t, DefaultLimits().Lifetime, got.Lifetime)
}
