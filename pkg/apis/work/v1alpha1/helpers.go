package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ControllerNameLabelValue returns the value of the
// work.open-cluster-management.io/manifestworkreplicaset label of the
// ManifestWorks of the ManifestWorkReplicaSet namespace/name:
// <namespace>.<name>. It returns an error when that is not a valid label
// value (for example longer than 63 characters); the controller then reports
// reason InvalidManifestWorkName.
func ControllerNameLabelValue(namespace, name string) (string, error) {
	value := namespace + "." + name
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return "", fmt.Errorf("ManifestWorkReplicaSet %s/%s: %q is not a valid label value: %s",
			namespace, name, value, strings.Join(errs, "; "))
	}
	return value, nil
}

// ParseControllerNameLabelValue splits a
// work.open-cluster-management.io/manifestworkreplicaset label value into the
// namespace and name of the ManifestWorkReplicaSet. Namespaces cannot contain
// dots, so the value is split at the first one.
func ParseControllerNameLabelValue(value string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(value, ".")
	if !ok || namespace == "" || name == "" {
		return "", "", false
	}
	return namespace, name, true
}
