package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestLeaseRenew(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	client := fake.NewClientset()
	l := newLeaseRenewer(client, defaultAddonName, testNamespace, "agent-1", 60*time.Second)
	l.clock = clock

	require.NoError(t, l.renew(ctx), "first renewal creates the lease")
	lease, err := client.CoordinationV1().Leases(testNamespace).Get(ctx, defaultAddonName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "agent-1", *lease.Spec.HolderIdentity)
	assert.Equal(t, int32(60), *lease.Spec.LeaseDurationSeconds)
	assert.True(t, lease.Spec.RenewTime.Time.Equal(start))
	assert.True(t, lease.Spec.AcquireTime.Time.Equal(start))

	clock.Step(15 * time.Second)
	require.NoError(t, l.renew(ctx), "later renewals update it")
	lease, err = client.CoordinationV1().Leases(testNamespace).Get(ctx, defaultAddonName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, lease.Spec.RenewTime.Time.Equal(start.Add(15*time.Second)), "renew time %s", lease.Spec.RenewTime)
	assert.True(t, lease.Spec.AcquireTime.Time.Equal(start), "the acquire time stays")
}
