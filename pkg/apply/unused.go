package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UnusedCRDs splits crds, CustomResourceDefinitions as rendered, into those
// no object of their kind uses any more, which may be removed, and those
// still in use, which must stay: removing a CRD deletes every object of its
// kind, such as the AppliedManifestWorks that keep what a work agent applied,
// and the ClusterClaims users wrote. It is the rule both `kubectl ocm unjoin`
// and the Klusterlet operator follow when a cluster leaves its hub.
func UnusedCRDs(ctx context.Context, c client.Reader, crds []*unstructured.Unstructured) (unused, inUse []*unstructured.Unstructured, err error) {
	for _, crd := range crds {
		used, err := crdInUse(ctx, c, crd)
		if err != nil {
			return nil, nil, err
		}
		if used {
			inUse = append(inUse, crd)
		} else {
			unused = append(unused, crd)
		}
	}
	return unused, inUse, nil
}

// crdInUse reports whether any object of the CRD's kind exists.
func crdInUse(ctx context.Context, c client.Reader, crd *unstructured.Unstructured) (bool, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			version, _ = m["name"].(string)
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(group + "/" + version)
	list.SetKind(kind + "List")
	if err := c.List(ctx, list, client.Limit(1)); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("check whether CRD %s is in use: %w", crd.GetName(), err)
	}
	return len(list.Items) > 0, nil
}
