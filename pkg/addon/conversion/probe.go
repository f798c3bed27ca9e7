package conversion

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProbeCRDName is the CRD whose objects Probe converts: ClusterManagementAddOn,
// cluster-scoped and valid with an empty spec.
const ProbeCRDName = "clustermanagementaddons.addon.open-cluster-management.io"

// Probe has the API server convert an object through the webhook: a
// server-side dry-run create of an empty ClusterManagementAddOn at a served
// version other than the storage version, which the API server converts to
// the storage version and back. It stores nothing. It returns nil without a
// request when the CRD serves a single version (nothing to convert).
func Probe(ctx context.Context, c client.Client) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: ProbeCRDName}, crd); err != nil {
		return fmt.Errorf("read CustomResourceDefinition %s: %w", ProbeCRDName, err)
	}
	storage, other := StorageVersion(crd), ""
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Name != storage {
			other = v.Name
			break
		}
	}
	if other == "" {
		return nil
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crd.Spec.Group + "/" + other,
		"kind":       crd.Spec.Names.Kind,
		"metadata":   map[string]any{"generateName": "conversion-probe-"},
		"spec":       map[string]any{},
	}}
	if err := c.Create(ctx, obj, client.DryRunAll); err != nil {
		return fmt.Errorf("convert a %s from %s to %s: %w", crd.Spec.Names.Kind, other, storage, err)
	}
	return nil
}
