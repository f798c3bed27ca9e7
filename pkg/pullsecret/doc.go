// Package pullsecret holds the image pull Secret of the product, as OCM
// spells it: open-cluster-management-image-pull-credentials, of type
// kubernetes.io/dockerconfigjson, in the operators' namespace on the hub and
// on each managed cluster.
//
// The CLI writes it from a docker config.json (`--image-pull-credentials`,
// checked by Validate), and the cluster importer from the values'
// imageCredentials, each next to the operator it installs (Append); the
// operators copy it (Wire) into the namespaces of the Deployments they
// render and reference it from their pod templates, and the Klusterlet
// operator also into the add-on namespaces. Every copy carries CopyLabel,
// and an operator deletes only Secrets that carry it.
package pullsecret
