package install

import (
	"maps"
	"slices"
	"strings"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// syncsAnnotations reports whether the ManagedClusterAddOns of cma get the
// add-on annotations of their ManagedCluster: its install strategy is not
// Manual, whoever manages the add-on's lifecycle, as in OCM.
func syncsAnnotations(cma *addonv1alpha1.ClusterManagementAddOn) bool {
	t := cma.Spec.InstallStrategy.Type
	return t != "" && t != addonv1alpha1.InstallStrategyManual
}

// addonAnnotations returns the annotations of a ManagedCluster that
// begin with addonv1alpha1.ClusterAnnotationPrefix.
func addonAnnotations(cluster map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range cluster {
		if strings.HasPrefix(k, addonv1alpha1.ClusterAnnotationPrefix) {
			out[k] = v
		}
	}
	return out
}

// addonAnnotationsChanged reports whether the add-on annotations of a
// ManagedCluster differ between old and cur.
func addonAnnotationsChanged(old, cur map[string]string) bool {
	return !maps.Equal(addonAnnotations(old), addonAnnotations(cur))
}

// mergeClusterAnnotations returns the annotations of a ManagedClusterAddOn,
// mca, with the add-on annotations of its ManagedCluster, cluster, merged
// in:
//   - every one the cluster has is set to the cluster's value, replacing a
//     value set on the ManagedClusterAddOn;
//   - one copied earlier (listed in addonv1alpha1.ClusterAnnotationsAnnotation)
//     that the cluster no longer has is removed;
//   - every other annotation, including add-on annotations set on the
//     ManagedClusterAddOn itself, is kept;
//   - ClusterAnnotationsAnnotation lists the cluster's add-on annotations
//     (and is absent when there are none).
//
// mca is not changed; the result is nil when it has no annotation.
func mergeClusterAnnotations(mca, cluster map[string]string) map[string]string {
	out := maps.Clone(mca)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range strings.Split(out[addonv1alpha1.ClusterAnnotationsAnnotation], ",") {
		if strings.HasPrefix(k, addonv1alpha1.ClusterAnnotationPrefix) {
			delete(out, k)
		}
	}
	copied := addonAnnotations(cluster)
	maps.Copy(out, copied)
	if len(copied) == 0 {
		delete(out, addonv1alpha1.ClusterAnnotationsAnnotation)
	} else {
		out[addonv1alpha1.ClusterAnnotationsAnnotation] = strings.Join(slices.Sorted(maps.Keys(copied)), ",")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
