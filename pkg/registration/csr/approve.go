package csr

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
