package conversion

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProbeCRDName is the CRD whose objects Probe converts: ClusterManagementAddOn,
// cluster-scoped and valid with an empty spec.
const ProbeCRDName = "clustermanagementaddons.addon.open-cluster-management.io"

// probeSpecs are the smallest valid specs of each converted CRD's objects.
// Namespaced kinds are probed in the default namespace, which every cluster
// has.
var probeSpecs = map[string]map[string]any{
	"addondeploymentconfigs.addon.open-cluster-management.io": {},
	"addontemplates.addon.open-cluster-management.io": {
		"addonName": "conversion-probe",
		"agentSpec": map[string]any{"workload": map[string]any{"manifests": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "conversion-probe", "namespace": metav1.NamespaceDefault}},
		}}},
	},
	ProbeCRDName: {},
	"managedclusteraddons.addon.open-cluster-management.io": {},
}

// Probe has the API server convert an object through the webhook: a
// server-side dry-run create of an empty ClusterManagementAddOn at a served
// version other than the storage version, which the API server converts to
// the storage version and back. It stores nothing. It returns nil without a
// request when the CRD serves a single version (nothing to convert). c needs
// create on clustermanagementaddons only, as the hub controller has.
func Probe(ctx context.Context, c client.Client) error {
	return probeCRD(ctx, c, ProbeCRDName)
}

// ProbeAll probes each converted CRD as Probe does ProbeCRDName's. The API
// server takes up a CRD's new conversion settings (such as the webhook's CA
// bundle) for each CRD on its own, so that one converts says nothing of the
// others. c needs create on every converted kind, as a hub administrator has.
func ProbeAll(ctx context.Context, c client.Client) error {
	for _, name := range CRDNames {
		if err := probeCRD(ctx, c, name); err != nil {
			return err
		}
	}
	return nil
}

func probeCRD(ctx context.Context, c client.Client, name string) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
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
	spec, ok := probeSpecs[name]
	if !ok {
		return fmt.Errorf("no conversion probe for CustomResourceDefinition %s", name)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crd.Spec.Group + "/" + other,
		"kind":       crd.Spec.Names.Kind,
		"metadata":   map[string]any{"generateName": "conversion-probe-"},
		"spec":       runtime.DeepCopyJSONValue(spec),
	}}
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	if err := c.Create(ctx, obj, client.DryRunAll); err != nil {
		return fmt.Errorf("convert a %s from %s to %s: %w", crd.Spec.Names.Kind, other, storage, err)
	}
	return nil
}
