package conversion

import (
	"crypto/tls"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// TestGetCertificateBeforeStart: a handshake before the keeper started (the
// manager starts it only after its caches synced, which may wait for this
// webhook) serves the certificate of the Secret, or of a Secret it writes
// when there is none, instead of failing.
func TestGetCertificateBeforeStart(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	certs := servingcert.Options{CommonName: conversion.ServiceName, Hosts: conversion.ServiceHosts("hub")}
	plan, err := servingcert.Plan(nil, certs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Secret{Data: plan.Data}
	stored.Namespace, stored.Name = "hub", conversion.SecretName
	tests := []struct {
		name    string
		objects []client.Object
	}{
		{name: "stored certificate", objects: []client.Object{stored}},
		{name: "no Secret yet", objects: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objects...).Build()
			k := &Keeper{Client: c, Reader: c, Namespace: "hub", Certs: certs}
			got, err := k.GetCertificate(&tls.ClientHelloInfo{})
			if err != nil || got == nil {
				t.Fatalf("GetCertificate before Start = %v, %v; want a certificate", got, err)
			}
			secret := &corev1.Secret{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "hub", Name: conversion.SecretName}, secret); err != nil {
				t.Fatalf("the Secret after the handshake: %v", err)
			}
			if tt.objects != nil && string(secret.Data[servingcert.CertKey]) != string(plan.Data[servingcert.CertKey]) {
				t.Error("the handshake replaced a valid stored certificate")
			}
			if again, err := k.GetCertificate(&tls.ClientHelloInfo{}); err != nil || again != got {
				t.Errorf("a second handshake got %v, %v; want the loaded certificate", again, err)
			}
		})
	}
}
