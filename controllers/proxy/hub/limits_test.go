package hub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

// TestStillAuthorized checks what ends an attached tunnel at a
// re-authorization: its lifetime, a denied review, and a token agent's
// ServiceAccount deleted or created again.
func TestStillAuthorized(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "agents", Name: "cluster1", UID: "uid-1"}}
	certAgent := &caller{user: "system:open-cluster-management:cluster1:a1", groups: []string{"system:open-cluster-management:cluster1"}}
	tokenAgent := &caller{user: "system:serviceaccount:agents:cluster1", uid: "uid-1"}
	tests := []struct {
		name    string
		agent   *caller
		allowed bool
		expired bool
		objects []client.Object
		want    string
	}{
		{name: "a certificate agent still allowed", agent: certAgent, allowed: true},
		{name: "a certificate agent no longer allowed", agent: certAgent, want: "may no longer get managedclusters/attach cluster1"},
		{name: "a tunnel past its lifetime", agent: certAgent, allowed: true, expired: true, want: "its lifetime ended"},
		{name: "a token agent whose ServiceAccount exists", agent: tokenAgent, allowed: true, objects: []client.Object{sa}},
		{name: "a token agent whose ServiceAccount was deleted", agent: tokenAgent, allowed: true, want: "ServiceAccount agents/cluster1 it authenticated as was deleted"},
		{name: "a token agent whose ServiceAccount was created again", agent: &caller{user: tokenAgent.user, uid: "uid-0"}, allowed: true,
			objects: []client.Object{sa}, want: "was deleted and created again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reviews := 0
			c := fake.NewClientBuilder().WithObjects(tt.objects...).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					sar, ok := obj.(*authorizationv1.SubjectAccessReview)
					if !ok {
						return c.Create(ctx, obj, opts...)
					}
					reviews++
					sar.Status.Allowed = tt.allowed
					return nil
				},
			}).Build()
			s := New(Options{Reviews: c, Reader: c, Log: logr.Discard()})
			expires := time.Now().Add(time.Hour)
			if tt.expired {
				expires = time.Now().Add(-time.Second)
			}
			tun := &tunnel{cluster: "cluster1", agent: tt.agent, expires: expires, log: logr.Discard()}
			// The decision cache holds an allow that must not count.
			s.review.decisions = map[string]decision{}
			got, err := s.stillAuthorized(t.Context(), tun)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.want)
			}
			if !tt.expired {
				assert.Equal(t, 1, reviews, "a re-authorization asks the API server, not the cache")
			}
		})
	}
}

// syncTimeoutCache fails GetInformer as an informer cache does when it stops
// before the informer synced.
type syncTimeoutCache struct{ cache.Cache }

func (syncTimeoutCache) GetInformer(ctx context.Context, _ client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	<-ctx.Done()
	return nil, errors.New("timeout: failed waiting for *v1.ManagedCluster Informer to sync")
}

func TestStartStoppedBeforeCacheSyncIsNoFailure(t *testing.T) {
	s := New(Options{Clusters: syncTimeoutCache{}, Log: logr.Discard()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, s.Start(ctx), "a shutdown before the cache synced")
}

// informerErrorCache fails GetInformer at once, as a cache that cannot
// watch the kind does.
type informerErrorCache struct{ cache.Cache }

func (informerErrorCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return nil, errors.New("no kind ManagedCluster is registered")
}

func TestStartReportsACacheThatCannotWatch(t *testing.T) {
	s := New(Options{Clusters: informerErrorCache{}, Log: logr.Discard()})
	require.ErrorContains(t, s.Start(context.Background()), "watch ManagedClusters for the hub tunnel: no kind ManagedCluster")
}
