// Package helm checks the Helm charts under config/charts against the
// verbs: `helm template`, run with Helm's own command, renders the same
// objects as `kubectl ocm hub init --dry-run=client -o yaml` and as the
// agent manifests `kubectl ocm join` installs, for the default values and
// for values that change every field; and that one values file (a file
// setting every value, and the examples under examples/values) gives the
// same objects through `helm template -f FILE` as through `hub init
// --values-file FILE` and `join --values-file FILE`. The module is apart
// from the product's so that the product does not depend on Helm.
package helm
