package main

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// leaseRenewer keeps the add-on's Lease (named as the add-on) in the
// install namespace fresh: the add-on's health signal on the managed cluster.
type leaseRenewer struct {
	client    kubernetes.Interface
	name      string
	namespace string
	holder    string
	duration  time.Duration
	clock     clock.Clock
}

// newLeaseRenewer returns a renewer of Lease name in namespace, held by
// holder, with the given lease duration.
func newLeaseRenewer(client kubernetes.Interface, name, namespace, holder string, duration time.Duration) *leaseRenewer {
	return &leaseRenewer{client: client, name: name, namespace: namespace, holder: holder, duration: duration, clock: clock.RealClock{}}
}

// run renews the Lease every quarter of its duration until ctx ends; a
// failed renewal is logged and retried at the next tick.
func (l *leaseRenewer) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := l.renew(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "renew the add-on lease")
		}
	}, l.duration/4)
}

// renew creates the Lease or sets its renew time to now.
func (l *leaseRenewer) renew(ctx context.Context) error {
	leases := l.client.CoordinationV1().Leases(l.namespace)
	now := metav1.NewMicroTime(l.clock.Now())
	seconds := ptr.To(int32(l.duration / time.Second))
	lease, err := leases.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.namespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(l.holder), LeaseDurationSeconds: seconds,
				AcquireTime: &now, RenewTime: &now,
			},
		}
		if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Lease %s/%s: %w", l.namespace, l.name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Lease %s/%s: %w", l.namespace, l.name, err)
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = ptr.To(l.holder), seconds, &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew Lease %s/%s: %w", l.namespace, l.name, err)
	}
	return nil
}
