package cli

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

// TestDryRunWriter writes through the dry-run client of each mode and
// checks what the server then holds: in client and server mode, exactly
// what it held before.
func TestDryRunWriter(t *testing.T) {
	existing := func() []client.Object {
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}, Data: map[string]string{"k": "v"}},
			&certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"}},
		}
	}
	for _, tt := range []struct {
		mode        string
		wantChanged bool
	}{{DryRunNone, true}, {DryRunClient, false}, {DryRunServer, false}} {
		t.Run(tt.mode, func(t *testing.T) {
			ctx := context.Background()
			backing := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(existing()...).WithStatusSubresource(&certificatesv1.CertificateSigningRequest{}).Build()
			c := DryRunWriter(backing, tt.mode)

			if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "new"}}); err != nil {
				t.Fatalf("create: %v", err)
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cm"}, cm); err != nil {
				t.Fatalf("get: %v", err)
			}
			base := cm.DeepCopy()
			cm.Data["k"] = "changed"
			if err := c.Patch(ctx, cm, client.MergeFrom(base)); err != nil {
				t.Fatalf("patch: %v", err)
			}
			csr := &certificatesv1.CertificateSigningRequest{}
			if err := c.Get(ctx, client.ObjectKey{Name: "csr"}, csr); err != nil {
				t.Fatalf("get csr: %v", err)
			}
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
			if err := c.Status().Update(ctx, csr); err != nil {
				t.Fatalf("update status: %v", err)
			}
			if err := c.Delete(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr"}}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			// The fake client admits a dry-run deletion of anything; an API
			// server says NotFound, as the client mode does.
			err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "missing"}})
			if tt.mode != DryRunServer && !apierrors.IsNotFound(err) {
				t.Errorf("delete of a missing object: err = %v, want NotFound", err)
			}

			changed := false
			if err := backing.Get(ctx, client.ObjectKey{Namespace: "default", Name: "new"}, &corev1.ConfigMap{}); err == nil {
				changed = true
			}
			if err := backing.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cm"}, cm); err != nil || cm.Data["k"] != "v" {
				changed = true
			}
			if err := backing.Get(ctx, client.ObjectKey{Name: "csr"}, csr); err == nil && len(csr.Status.Conditions) > 0 {
				changed = true
			} else if apierrors.IsNotFound(err) {
				changed = true
			}
			if changed != tt.wantChanged {
				t.Errorf("the server's objects changed: %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

func TestDryRunSuffix(t *testing.T) {
	for mode, want := range map[string]string{DryRunNone: "", DryRunClient: " (dry run)", DryRunServer: " (server dry run)"} {
		if got := DryRunSuffix(mode); got != want {
			t.Errorf("DryRunSuffix(%q) = %q, want %q", mode, got, want)
		}
	}
}
