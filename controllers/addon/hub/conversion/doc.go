// Package conversion runs the conversion webhook of the add-on API in the hub
// controller: it serves /convert with controller-runtime's conversion handler
// on the project's scheme (pkg/apis), keeps the webhook's CA and serving
// certificate in a Secret of the hub namespace (pkg/servingcert), rotates
// them before they expire, serves the current certificate without a restart,
// and keeps the caBundle of every converted CustomResourceDefinition
// (pkg/addon/conversion.CRDNames) equal to the CA bundle, with a field
// manager of its own so that `kubectl ocm hub init` re-applying the CRDs
// leaves it in place.
package conversion
