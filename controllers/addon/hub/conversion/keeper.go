package conversion

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// The Secret of the serving certificate and the CRDs whose caBundle the
// keeper writes, by name.
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get;update,resourceNames=ocm-hub-controller-webhook-serving-cert
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames=addondeploymentconfigs.addon.open-cluster-management.io;addontemplates.addon.open-cluster-management.io;clustermanagementaddons.addon.open-cluster-management.io;managedclusteraddons.addon.open-cluster-management.io

// DefaultResync is how often the keeper checks the Secret and the CRDs when
// no certificate is due earlier: it restores a caBundle someone removed and
// picks up a certificate another replica wrote.
const DefaultResync = time.Minute

// retryInterval is how soon the keeper retries after a failed check.
const retryInterval = 5 * time.Second

// Keeper keeps the webhook's Secret and the CRDs' caBundle current and hands
// the current serving certificate to the TLS server. Every replica runs one:
// writes are guarded by resource versions, so replicas converge on the
// Secret one of them wrote.
type Keeper struct {
	// Client writes the Secret and the CRDs.
	Client client.Client
	// Reader reads them, uncached.
	Reader client.Reader
	// Namespace holds the Secret.
	Namespace string
	// Certs say what the certificates hold and how long they live.
	Certs servingcert.Options
	// Resync bounds the time between two checks. Default: DefaultResync.
	Resync time.Duration
	// Log receives the keeper's progress.
	Log logr.Logger

	serving atomic.Pointer[tls.Certificate]

	// first serializes the checks GetCertificate makes before the first
	// certificate is loaded; tried is when the last one started.
	first sync.Mutex
	tried time.Time
}

// NeedLeaderElection is false: every replica serves conversions and needs
// the certificate.
func (k *Keeper) NeedLeaderElection() bool { return false }

// GetCertificate returns the current serving certificate, for
// tls.Config.GetCertificate. Until the keeper has loaded one, a handshake
// checks the Secret itself (at most once a second): the manager starts the
// keeper only once its caches have synced, and its caches of the add-on
// kinds at v1alpha1 cannot sync while objects stored at v1beta1 wait for
// this webhook to convert them, so a restarted hub controller would
// otherwise never serve.
func (k *Keeper) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := k.serving.Load(); c != nil {
		return c, nil
	}
	if c := k.firstCheck(hello.Context()); c != nil {
		return c, nil
	}
	return nil, errors.New("the conversion webhook's serving certificate is not loaded yet")
}

// firstCheck runs Sync for a handshake that found no certificate, unless
// another one did within the last second, and returns the certificate
// loaded, nil when there is none yet.
func (k *Keeper) firstCheck(ctx context.Context) *tls.Certificate {
	k.first.Lock()
	defer k.first.Unlock()
	if c := k.serving.Load(); c != nil || time.Since(k.tried) < time.Second {
		return c
	}
	k.tried = time.Now()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, firstCheckTimeout)
	defer cancel()
	if _, err := k.Sync(ctx); err != nil {
		k.Log.Error(err, "Loading the conversion webhook's certificate for a handshake")
	}
	return k.serving.Load()
}

// firstCheckTimeout bounds a check made during a TLS handshake.
const firstCheckTimeout = 5 * time.Second

// Start checks the Secret and the CRDs until ctx ends: at once, then when a
// certificate is due or after Resync, whichever comes first.
func (k *Keeper) Start(ctx context.Context) error {
	resync := k.Resync
	if resync <= 0 {
		resync = DefaultResync
	}
	repeat(ctx, func(ctx context.Context) time.Duration {
		next, err := k.Sync(ctx)
		switch {
		case err != nil:
			k.Log.Error(err, "Keeping the conversion webhook's certificate")
			return min(resync, retryInterval)
		case time.Until(next) < resync:
			return max(time.Until(next), 0)
		}
		return resync
	})
	return nil
}

// repeat calls check until ctx ends, waiting after each call for the
// duration it returns.
func repeat(ctx context.Context, check func(context.Context) time.Duration) {
	for {
		timer := time.NewTimer(check(ctx))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// Sync brings the Secret, the served certificate and the CRDs' caBundle up
// to date once, and returns when the next certificate is due.
func (k *Keeper) Sync(ctx context.Context) (time.Time, error) {
	secret := &corev1.Secret{}
	err := k.Reader.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: conversion.SecretName}, secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return time.Time{}, fmt.Errorf("read Secret %s/%s: %w", k.Namespace, conversion.SecretName, err)
	}
	plan, err := servingcert.Plan(secret.Data, k.Certs, time.Now())
	if err != nil {
		return time.Time{}, err
	}
	if plan.Changed {
		if err := k.writeSecret(ctx, secret, exists, plan.Data); err != nil {
			return time.Time{}, err
		}
		k.Log.Info("Wrote the conversion webhook's certificate", "secret", k.Namespace+"/"+conversion.SecretName, "next", plan.Next)
	}
	k.serving.Store(plan.Serving)
	for _, name := range conversion.CRDNames {
		if err := k.syncCABundle(ctx, name, plan.Data[servingcert.CABundleKey]); err != nil {
			return time.Time{}, err
		}
	}
	return plan.Next, nil
}

// writeSecret creates or updates the Secret with data. A conflict means
// another replica wrote it: the next check adopts its certificate.
func (k *Keeper) writeSecret(ctx context.Context, secret *corev1.Secret, exists bool, data map[string][]byte) error {
	if !exists {
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: conversion.SecretName},
			Type:       corev1.SecretTypeTLS,
		}
	}
	secret.Data = data
	var err error
	if exists {
		err = k.Client.Update(ctx, secret)
	} else {
		err = k.Client.Create(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("write Secret %s/%s: %w", k.Namespace, conversion.SecretName, err)
	}
	return nil
}

// syncCABundle sets the caBundle of the CRD named name to bundle when the
// CRD converts through a webhook and holds another one. A missing CRD is
// left alone: `hub init` creates it.
func (k *Keeper) syncCABundle(ctx context.Context, name string, bundle []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
	}
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return nil
	}
	if string(conv.Webhook.ClientConfig.CABundle) == string(bundle) {
		return nil
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiextensionsv1.SchemeGroupVersion.String(),
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{"clientConfig": map[string]any{
			"caBundle": base64.StdEncoding.EncodeToString(bundle),
		}}}},
	}}
	if err := k.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(conversion.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("set the caBundle of CustomResourceDefinition %s: %w", name, err)
	}
	k.Log.Info("Set the conversion webhook's CA bundle", "crd", name)
	return nil
}
