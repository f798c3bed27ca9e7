package klusterlet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

const operatorNamespace = "open-cluster-management"

func namespace(name string, addon bool) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if addon {
		ns.Labels = map[string]string{addonv1alpha1.InstallNamespaceLabelKey: "true"}
	}
	return ns
}

func profileIn(ns string, data map[string]string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tlsprofile.ConfigMapName, Labels: labels}, Data: data}
}

// TestAddonTLSProfileCopy checks the copy of the TLS profile in one add-on
// namespace: created, kept equal to the source, deleted with the source or
// the namespace's label, and a ConfigMap that is no copy left alone.
func TestAddonTLSProfileCopy(t *testing.T) {
	tls13 := map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS13"}
	copied := map[string]string{TLSProfileCopyLabel: operatorNamespace}
	tests := []struct {
		name     string
		objs     []client.Object
		wantData map[string]string // nil: no copy
	}{
		{name: "created", objs: []client.Object{namespace("addon", true), profileIn(operatorNamespace, tls13, nil)}, wantData: tls13},
		{
			name:     "updated",
			objs:     []client.Object{namespace("addon", true), profileIn(operatorNamespace, tls13, nil), profileIn("addon", map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"}, copied)},
			wantData: tls13,
		},
		{name: "deleted with the source", objs: []client.Object{namespace("addon", true), profileIn("addon", tls13, copied)}},
		{name: "deleted with the label", objs: []client.Object{namespace("addon", false), profileIn(operatorNamespace, tls13, nil), profileIn("addon", tls13, copied)}},
		{name: "none in an unlabeled namespace", objs: []client.Object{namespace("addon", false), profileIn(operatorNamespace, tls13, nil)}},
		{
			name:     "a ConfigMap that is no copy is not deleted",
			objs:     []client.Object{namespace("addon", true), profileIn("addon", tls13, nil)},
			wantData: tls13,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(tt.objs...).Build()
			r := &AddonTLSProfileReconciler{Client: c, Namespace: operatorNamespace}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "addon"}}); err != nil {
				t.Fatal(err)
			}
			got := &corev1.ConfigMap{}
			err := c.Get(context.Background(), types.NamespacedName{Namespace: "addon", Name: tlsprofile.ConfigMapName}, got)
			switch {
			case tt.wantData == nil && !apierrors.IsNotFound(err):
				t.Fatalf("the copy exists (%v): %+v", err, got.Data)
			case tt.wantData == nil:
			case err != nil:
				t.Fatal(err)
			case got.Data[tlsprofile.MinTLSVersionKey] != tt.wantData[tlsprofile.MinTLSVersionKey] || len(got.Data) != len(tt.wantData):
				t.Errorf("copy data %v, want %v", got.Data, tt.wantData)
			}
		})
	}
	// The source's own namespace is never written.
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(namespace(operatorNamespace, true), profileIn(operatorNamespace, tls13, nil)).Build()
	r := &AddonTLSProfileReconciler{Client: c, Namespace: operatorNamespace}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	src := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: operatorNamespace, Name: tlsprofile.ConfigMapName}, src); err != nil || src.Labels[TLSProfileCopyLabel] != "" {
		t.Errorf("the source was changed: %v %v", err, src.Labels)
	}
}
