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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
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
// namespace: created, kept equal to the source, deleted with the source,
// left alone in a namespace without the label, and a ConfigMap that is no
// copy left alone.
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
		{
			name:     "kept where the namespace has no label",
			objs:     []client.Object{namespace("addon", false), profileIn("addon", tls13, copied)},
			wantData: tls13,
		},
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
			r := &AddonCopyReconciler{Client: c, Namespace: operatorNamespace}
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
	r := &AddonCopyReconciler{Client: c, Namespace: operatorNamespace}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	src := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: operatorNamespace, Name: tlsprofile.ConfigMapName}, src); err != nil || src.Labels[TLSProfileCopyLabel] != "" {
		t.Errorf("the source was changed: %v %v", err, src.Labels)
	}
}

func pullSecretIn(ns, auths string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pullsecret.Name, Labels: labels},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(auths)},
	}
}

// TestAddonPullSecretCopy checks the copy of the image pull Secret in one
// namespace: created with the source's type and data, updated, deleted
// with the source only where it carries the copy label, and nothing
// deleted in a namespace without the add-on label, whatever its Secret's
// labels say.
func TestAddonPullSecretCopy(t *testing.T) {
	const a, b = `{"auths":{"a.example":{"auth":"dTpw"}}}`, `{"auths":{"b.example":{"auth":"dTpw"}}}`
	copied := map[string]string{pullsecret.CopyLabel: operatorNamespace}
	tests := []struct {
		name string
		objs []client.Object
		want string // "": no Secret
	}{
		{name: "created", objs: []client.Object{namespace("addon", true), pullSecretIn(operatorNamespace, a, nil)}, want: a},
		{name: "updated", objs: []client.Object{namespace("addon", true), pullSecretIn(operatorNamespace, a, nil), pullSecretIn("addon", b, copied)}, want: a},
		{name: "deleted with the source", objs: []client.Object{namespace("addon", true), pullSecretIn("addon", a, copied)}},
		{name: "a Secret that is no copy is not deleted", objs: []client.Object{namespace("addon", true), pullSecretIn("addon", b, nil)}, want: b},
		{name: "none in an unlabeled namespace", objs: []client.Object{namespace("addon", false), pullSecretIn(operatorNamespace, a, nil)}},
		{
			name: "a forged copy label in an unlabeled namespace deletes nothing",
			objs: []client.Object{namespace("addon", false), pullSecretIn("addon", b, copied)},
			want: b,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(tt.objs...).Build()
			r := &AddonCopyReconciler{Client: c, Namespace: operatorNamespace}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "addon"}}); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Secret{}
			err := c.Get(context.Background(), types.NamespacedName{Namespace: "addon", Name: pullsecret.Name}, got)
			switch {
			case tt.want == "" && !apierrors.IsNotFound(err):
				t.Fatalf("the Secret exists (%v): %s", err, got.Data[corev1.DockerConfigJsonKey])
			case tt.want == "":
			case err != nil:
				t.Fatal(err)
			case string(got.Data[corev1.DockerConfigJsonKey]) != tt.want || got.Type != corev1.SecretTypeDockerConfigJson:
				t.Errorf("Secret %s %s, want %s", got.Type, got.Data[corev1.DockerConfigJsonKey], tt.want)
			}
		})
	}
}
