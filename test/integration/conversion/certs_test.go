package conversion

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/operator/clustermanager"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestCABundleRotation runs the webhook with short lifetimes: the serving
// certificate is renewed and served without a restart, the CA is renewed
// with the previous one kept in the bundle until it expires, every converted
// CRD's caBundle follows the Secret, and the API server converts throughout.
func TestCABundleRotation(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	s.install(t)
	s.startWebhook(t, addonconversion.Options{CAValidity: 20 * time.Second, ServingValidity: 6 * time.Second, Resync: time.Second})
	first := s.secret(t)
	s.expectCABundles(t, first.Data[servingcert.CABundleKey])

	framework.Eventually(s.ctx, t, 30*time.Second, "the serving certificate renewed", func(ctx context.Context) (bool, error) {
		return !bytes.Equal(s.secret(t).Data[servingcert.CertKey], first.Data[servingcert.CertKey]), nil
	})
	framework.Eventually(s.ctx, t, 10*time.Second, "a conversion with the renewed certificate", func(ctx context.Context) (bool, error) {
		return true, conversion.ProbeAll(ctx, s.admin)
	})

	var rotated *corev1.Secret
	framework.Eventually(s.ctx, t, time.Minute, "the CA renewed, the previous one still in the bundle", func(ctx context.Context) (bool, error) {
		rotated = s.secret(t)
		cas, err := certutil.ParseCertsPEM(rotated.Data[servingcert.CABundleKey])
		return err == nil && len(cas) == 2, err
	})
	s.expectCABundles(t, rotated.Data[servingcert.CABundleKey])
	framework.Eventually(s.ctx, t, 10*time.Second, "a conversion after the CA renewal", func(ctx context.Context) (bool, error) {
		return true, conversion.ProbeAll(ctx, s.admin)
	})
	framework.Eventually(s.ctx, t, time.Minute, "the expired CA dropped from the bundle", func(ctx context.Context) (bool, error) {
		cas, err := certutil.ParseCertsPEM(s.secret(t).Data[servingcert.CABundleKey])
		return err == nil && len(cas) == 1, err
	})
	s.expectCABundles(t, s.secret(t).Data[servingcert.CABundleKey])
	framework.Eventually(s.ctx, t, 10*time.Second, "a conversion with the renewed CA alone", func(ctx context.Context) (bool, error) {
		return true, conversion.ProbeAll(ctx, s.admin)
	})
}

// TestHubInitKeepsCABundle re-runs `hub init`, then applies the hub as the
// ClusterManager operator does, whose server-side apply of the CRDs holds no
// caBundle: the caBundle the hub controller set stays, under its own field
// manager, and conversions keep working.
func TestHubInitKeepsCABundle(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	s.install(t)
	s.startWebhook(t, addonconversion.Options{Resync: time.Hour})
	bundle := s.secret(t).Data[servingcert.CABundleKey]
	s.expectCABundles(t, bundle)

	r := s.cli.Run(s.ctx, "hub", "init", "--conversion-webhook-url", s.url)
	clitest.ExpectOK(t, r, "kubectl ocm join")
	objs, err := config.HubObjects(config.HubValues{ConversionWebhookURL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Apply(s.ctx, s.admin, objs, apply.Options{FieldManager: clustermanager.FieldManager}); err != nil {
		t.Fatal(err)
	}
	s.expectCABundles(t, bundle)
	for _, name := range conversion.CRDNames {
		crd := s.crd(t, name)
		managers := map[string]bool{}
		for _, f := range crd.ManagedFields {
			if strings.Contains(f.FieldsV1.GetRawString(), `"f:caBundle"`) {
				managers[f.Manager] = true
			}
		}
		if !managers[conversion.FieldManager] || len(managers) != 1 {
			t.Errorf("%s: caBundle managed by %v, want %s alone", name, managers, conversion.FieldManager)
		}
	}
	if err := conversion.ProbeAll(s.ctx, s.admin); err != nil {
		t.Fatalf("conversion after hub init: %v", err)
	}
}

// secret reads the webhook's Secret.
func (s *suite) secret(t *testing.T) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	if err := s.admin.Get(s.ctx, types.NamespacedName{Namespace: config.HubNamespace, Name: conversion.SecretName}, secret); err != nil {
		t.Fatal(err)
	}
	return secret
}

// expectCABundles waits until every converted CRD's caBundle is bundle.
func (s *suite) expectCABundles(t *testing.T, bundle []byte) {
	t.Helper()
	for _, name := range conversion.CRDNames {
		framework.Eventually(s.ctx, t, 30*time.Second, "the caBundle of "+name, func(ctx context.Context) (bool, error) {
			crd := s.crd(t, name)
			cc := crd.Spec.Conversion.Webhook.ClientConfig
			return bytes.Equal(cc.CABundle, bundle) && cc.URL != nil && *cc.URL == s.url, nil
		})
	}
}
