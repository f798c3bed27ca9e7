// Package conversion holds what the hub controller, `kubectl ocm hub init`
// and `hub status` share about the conversion of the add-on API between
// v1alpha1 and v1beta1: which CustomResourceDefinitions convert through the
// hub controller's webhook, where the webhook is served, the Secret with its
// serving certificate, the health check `hub status` reports, and the
// migration of stored objects to the storage version that `hub init` runs on
// upgrade.
package conversion

import (
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// Where the hub controller serves conversions.
const (
	// Path is the webhook's HTTP path.
	Path = "/convert"
	// Port is the container port the hub controller serves the webhook on.
	Port = 9443
	// ServicePort is the port of the Service in front of the webhook.
	ServicePort = 443
	// ServiceName is the Service in the hub namespace in front of the webhook.
	ServiceName = "ocm-hub-controller-webhook"
	// SecretName is the Secret in the hub namespace holding the webhook's CA
	// and serving certificate (keys of pkg/servingcert).
	SecretName = "ocm-hub-controller-webhook-serving-cert"
	// FieldManager owns the caBundle of the converted CRDs, apart from the
	// fields `kubectl ocm hub init` applies.
	FieldManager = "ocm-hub-controller"
)

// CRDNames are the CustomResourceDefinitions served at v1alpha1 and v1beta1
// and converted by the webhook, as OCM converts them.
var CRDNames = []string{
	"addondeploymentconfigs.addon.open-cluster-management.io",
	"addontemplates.addon.open-cluster-management.io",
	"clustermanagementaddons.addon.open-cluster-management.io",
	"managedclusteraddons.addon.open-cluster-management.io",
}

// IsConverted reports whether the CRD named name converts through the webhook.
func IsConverted(name string) bool { return slices.Contains(CRDNames, name) }

// ServiceHosts are the DNS names of the webhook's Service in namespace that a
// serving certificate must hold; the API server checks <service>.<namespace>.svc.
func ServiceHosts(namespace string) []string {
	return servingcert.ServiceHosts(ServiceName, namespace)
}

// StorageVersion returns the name of crd's storage version, or "" when none
// is marked.
func StorageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	v, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return ""
	}
	return v
}

// NeedsMigration reports whether objects of crd may be stored at a version
// other than its storage version, according to its status.storedVersions.
func NeedsMigration(crd *apiextensionsv1.CustomResourceDefinition) bool {
	storage := StorageVersion(crd)
	return slices.ContainsFunc(crd.Status.StoredVersions, func(v string) bool { return v != storage })
}

// WebhookConversion returns the conversion stanza of a converted CRD: the
// webhook at url when url is set, else behind ServiceName in namespace. The
// CA bundle is left to the hub controller.
func WebhookConversion(namespace, url string) *apiextensionsv1.CustomResourceConversion {
	cc := &apiextensionsv1.WebhookClientConfig{}
	if url != "" {
		cc.URL = &url
	} else {
		path, port := Path, int32(ServicePort)
		cc.Service = &apiextensionsv1.ServiceReference{Namespace: namespace, Name: ServiceName, Path: &path, Port: &port}
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: cc, ConversionReviewVersions: []string{"v1"}},
	}
}
