package csr

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ApproveRequest adds an Approved condition with reason and message to a copy of
// csr and writes it through the approval subresource. csr itself, which may
// come from a cache, is not changed.
func ApproveRequest(ctx context.Context, c client.Client, csr *certificatesv1.CertificateSigningRequest, reason, message string) error {
	approved := csr.DeepCopy()
	approved.Status.Conditions = append(approved.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: reason, Message: message,
	})
	if err := c.SubResource("approval").Update(ctx, approved); err != nil {
		return fmt.Errorf("approve CertificateSigningRequest %s: %w", csr.Name, err)
	}
	return nil
}

// PendingRequests returns, as reconcile requests, the requests listed with
// opts that nobody decided on yet: the add-on agents' requests
// (IsAddonRequest) when addon is set, the cluster agents' otherwise. The
// approvers map changes of the objects their decisions depend on to them. A
// failed list is logged and yields none.
func PendingRequests(ctx context.Context, c client.Reader, addon bool, opts ...client.ListOption) []reconcile.Request {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List CertificateSigningRequests")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if obj := &list.Items[i]; !Decided(obj) && IsAddonRequest(obj) == addon {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return out
}
