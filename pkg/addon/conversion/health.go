package conversion

import (
	"context"
	"fmt"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// CA bundle states of a CRD in CRDHealth.
const (
	CABundleCurrent   = "current"
	CABundleMissing   = "missing"
	CABundleUntrusted = "untrusted"
	CABundleUnknown   = "unknown"
)

// Health is the state of the add-on API's conversion, as `hub status`
// reports it.
type Health struct {
	// Reachable reports whether the API server converted an object through
	// the webhook (Probe).
	Reachable bool `json:"reachable"`
	// CRDs describe each converted CRD.
	CRDs []CRDHealth `json:"crds"`
	// ServingNotAfter and CANotAfter are the expiry of the webhook's serving
	// certificate and of its signer.
	ServingNotAfter *time.Time `json:"servingCertificateNotAfter,omitempty"`
	CANotAfter      *time.Time `json:"caNotAfter,omitempty"`
	// Problems name what is wrong, each with its cause and its fix.
	Problems []string `json:"problems,omitempty"`
}

// CRDHealth is the conversion state of one CRD.
type CRDHealth struct {
	// Name is the CRD's name.
	Name string `json:"name"`
	// Installed reports whether the CRD exists.
	Installed bool `json:"installed"`
	// Strategy is spec.conversion.strategy.
	Strategy string `json:"strategy,omitempty"`
	// CABundle is current, missing, untrusted (it does not trust the serving
	// certificate) or unknown (no serving certificate to check).
	CABundle string `json:"caBundle,omitempty"`
	// StoredVersions is status.storedVersions; StorageVersion the version
	// objects are written at.
	StoredVersions []string `json:"storedVersions,omitempty"`
	StorageVersion string   `json:"storageVersion,omitempty"`
}

// Check reports the conversion's health on the hub c talks to, whose
// controller runs in namespace.
func Check(ctx context.Context, c client.Client, namespace string, now time.Time) (*Health, error) {
	h := &Health{}
	secret := &corev1.Secret{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName}, secret); {
	case apierrors.IsNotFound(err):
		h.problem("Secret %s/%s with the webhook's certificate does not exist: the hub controller creates it when it starts; check Deployment %s/ocm-hub-controller and its log", namespace, SecretName, namespace)
	case err != nil:
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, SecretName, err)
	}
	certPEM := secret.Data[servingcert.CertKey]
	if chain, err := certutil.ParseCertsPEM(certPEM); err == nil {
		h.ServingNotAfter = &chain[0].NotAfter
	}
	if cas, err := certutil.ParseCertsPEM(secret.Data[servingcert.CABundleKey]); err == nil {
		h.CANotAfter = &cas[0].NotAfter
	}
	if h.ServingNotAfter != nil && !now.Before(*h.ServingNotAfter) {
		h.problem("the webhook's serving certificate expired at %s: the hub controller renews it before expiry, so it is not running; check Deployment %s/ocm-hub-controller", h.ServingNotAfter.UTC().Format(time.RFC3339), namespace)
	}
	for _, name := range CRDNames {
		ch, err := checkCRD(ctx, c, name, namespace, certPEM, now)
		if err != nil {
			return nil, err
		}
		h.CRDs = append(h.CRDs, ch.CRDHealth)
		h.Problems = append(h.Problems, ch.problems...)
	}
	if err := Probe(ctx, c); err != nil {
		h.problem("the API server cannot convert add-on objects between versions (%v): check that the hub controller runs (Deployment %s/ocm-hub-controller) and that the API server reaches it through Service %s/%s (or the URL `hub init --conversion-webhook-url` set)", err, namespace, namespace, ServiceName)
	} else {
		h.Reachable = true
	}
	return h, nil
}

func (h *Health) problem(format string, args ...any) {
	h.Problems = append(h.Problems, fmt.Sprintf(format, args...))
}

// crdCheck is one CRD's health and problems.
type crdCheck struct {
	CRDHealth
	problems []string
}

// checkCRD reads the CRD named name and checks its conversion stanza
// against the serving certificate certPEM.
func checkCRD(ctx context.Context, c client.Client, name, namespace string, certPEM []byte, now time.Time) (*crdCheck, error) {
	ch := &crdCheck{CRDHealth: CRDHealth{Name: name}}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			ch.problems = append(ch.problems, fmt.Sprintf("CustomResourceDefinition %s is not installed: run `kubectl ocm hub init`", name))
			return ch, nil
		}
		return nil, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
	}
	ch.Installed = true
	ch.StoredVersions, ch.StorageVersion = crd.Status.StoredVersions, StorageVersion(crd)
	if NeedsMigration(crd) {
		ch.problems = append(ch.problems, fmt.Sprintf("CustomResourceDefinition %s may still store objects at %v, not only at %s: the hub controller migrates them once the API server reaches its conversion webhook; re-run `kubectl ocm hub init` to wait for it", name, crd.Status.StoredVersions, ch.StorageVersion))
	}
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		ch.Strategy = string(apiextensionsv1.NoneConverter)
		ch.problems = append(ch.problems, fmt.Sprintf("CustomResourceDefinition %s does not convert through the webhook: run `kubectl ocm hub init`", name))
		return ch, nil
	}
	ch.Strategy = string(conv.Strategy)
	cc := conv.Webhook.ClientConfig
	switch {
	case len(cc.CABundle) == 0:
		ch.CABundle = CABundleMissing
		ch.problems = append(ch.problems, fmt.Sprintf("CustomResourceDefinition %s has no caBundle: the hub controller sets it once it runs; check Deployment %s/ocm-hub-controller and its log", name, namespace))
	case len(certPEM) == 0:
		ch.CABundle = CABundleUnknown
	default:
		if _, err := servingcert.Verify(cc.CABundle, certPEM, clientConfigHost(cc), now); err != nil {
			ch.CABundle = CABundleUntrusted
			ch.problems = append(ch.problems, fmt.Sprintf("the caBundle of CustomResourceDefinition %s does not trust the webhook's serving certificate (%v): the hub controller corrects it within a minute; if it does not, check Deployment %s/ocm-hub-controller and its log", name, err, namespace))
		} else {
			ch.CABundle = CABundleCurrent
		}
	}
	return ch, nil
}

// clientConfigHost is the host the API server checks the serving
// certificate against: <service>.<namespace>.svc, or the URL's host.
func clientConfigHost(cc *apiextensionsv1.WebhookClientConfig) string {
	if cc.Service != nil {
		return cc.Service.Name + "." + cc.Service.Namespace + ".svc"
	}
	if cc.URL != nil {
		if u, err := url.Parse(*cc.URL); err == nil {
			return u.Hostname()
		}
	}
	return ""
}
