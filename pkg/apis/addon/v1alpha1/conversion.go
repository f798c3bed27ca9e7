package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// This file holds what the conversions of every kind share: the mapping of
// the types both versions define alike, and the annotations that carry the
// fields one version lacks. Each kind's ConvertTo and ConvertFrom live next
// to it in <kind>_conversion.go.

// mapSlice converts every element of in with f, keeping a nil slice nil.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// mapPtr converts the value in points at with f, keeping nil nil.
func mapPtr[T, U any](in *T, f func(T) U) *U {
	if in == nil {
		return nil
	}
	out := f(*in)
	return &out
}

// hubTypeError reports a conversion called with a hub object of the wrong kind.
func hubTypeError(want any, got conversion.Hub) error {
	return fmt.Errorf("convert add-on object: the hub object is a %T, want a %T", got, want)
}

// copyMeta returns a deep copy of meta, so that the converted object shares
// no map or slice with its source.
func copyMeta(meta *metav1.ObjectMeta) metav1.ObjectMeta {
	return *meta.DeepCopy()
}

// takeAnnotationJSON decodes the JSON object under key in meta's annotations
// into out and removes the annotation. A missing annotation leaves out as it is.
func takeAnnotationJSON(meta *metav1.ObjectMeta, key string, out any) error {
	raw, ok := meta.Annotations[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		return fmt.Errorf("annotation %s of %s/%s is not the JSON object conversion writes (remove it to convert the object without it): %w",
			key, meta.Namespace, meta.Name, err)
	}
	deleteAnnotation(meta, key)
	return nil
}

// putAnnotationJSON stores v as JSON under key in meta's annotations, or
// removes the key when v encodes to an empty object.
func putAnnotationJSON(meta *metav1.ObjectMeta, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode annotation %s of %s/%s: %w", key, meta.Namespace, meta.Name, err)
	}
	if string(raw) == "{}" {
		deleteAnnotation(meta, key)
		return nil
	}
	setAnnotation(meta, key, string(raw))
	return nil
}

// setAnnotation sets one annotation of meta.
func setAnnotation(meta *metav1.ObjectMeta, key, value string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = value
}

// deleteAnnotation removes one annotation of meta, and the map when it empties.
func deleteAnnotation(meta *metav1.ObjectMeta, key string) {
	delete(meta.Annotations, key)
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
}

// addOnMetaToV1beta1 and addOnMetaFromV1beta1 map AddOnMeta field by field.
func addOnMetaToV1beta1(in AddOnMeta) v1beta1.AddOnMeta {
	return v1beta1.AddOnMeta{DisplayName: in.DisplayName, Description: in.Description}
}

func addOnMetaFromV1beta1(in v1beta1.AddOnMeta) AddOnMeta {
	return AddOnMeta{DisplayName: in.DisplayName, Description: in.Description}
}

// groupResourceToV1beta1 and groupResourceFromV1beta1 map ConfigGroupResource.
func groupResourceToV1beta1(in ConfigGroupResource) v1beta1.ConfigGroupResource {
	return v1beta1.ConfigGroupResource{Group: in.Group, Resource: in.Resource}
}

func groupResourceFromV1beta1(in v1beta1.ConfigGroupResource) ConfigGroupResource {
	return ConfigGroupResource{Group: in.Group, Resource: in.Resource}
}

// referentToV1beta1 and referentFromV1beta1 map ConfigReferent.
func referentToV1beta1(in ConfigReferent) v1beta1.ConfigReferent {
	return v1beta1.ConfigReferent{Namespace: in.Namespace, Name: in.Name}
}

func referentFromV1beta1(in v1beta1.ConfigReferent) ConfigReferent {
	return ConfigReferent{Namespace: in.Namespace, Name: in.Name}
}

// addOnConfigToV1beta1 and addOnConfigFromV1beta1 map AddOnConfig.
func addOnConfigToV1beta1(in AddOnConfig) v1beta1.AddOnConfig {
	return v1beta1.AddOnConfig{
		ConfigGroupResource: groupResourceToV1beta1(in.ConfigGroupResource),
		ConfigReferent:      referentToV1beta1(in.ConfigReferent),
	}
}

func addOnConfigFromV1beta1(in v1beta1.AddOnConfig) AddOnConfig {
	return AddOnConfig{
		ConfigGroupResource: groupResourceFromV1beta1(in.ConfigGroupResource),
		ConfigReferent:      referentFromV1beta1(in.ConfigReferent),
	}
}

// specHashToV1beta1 and specHashFromV1beta1 map ConfigSpecHash.
func specHashToV1beta1(in ConfigSpecHash) v1beta1.ConfigSpecHash {
	return v1beta1.ConfigSpecHash{ConfigReferent: referentToV1beta1(in.ConfigReferent), SpecHash: in.SpecHash}
}

func specHashFromV1beta1(in v1beta1.ConfigSpecHash) ConfigSpecHash {
	return ConfigSpecHash{ConfigReferent: referentFromV1beta1(in.ConfigReferent), SpecHash: in.SpecHash}
}

// placementRefToV1beta1 and placementRefFromV1beta1 map PlacementRef.
func placementRefToV1beta1(in PlacementRef) v1beta1.PlacementRef {
	return v1beta1.PlacementRef{Namespace: in.Namespace, Name: in.Name}
}

func placementRefFromV1beta1(in v1beta1.PlacementRef) PlacementRef {
	return PlacementRef{Namespace: in.Namespace, Name: in.Name}
}

// conditionsCopy copies a condition list, which both versions share as metav1.Condition.
func conditionsCopy(in []metav1.Condition) []metav1.Condition {
	return mapSlice(in, func(c metav1.Condition) metav1.Condition { return *c.DeepCopy() })
}

// stringsCopy copies a string list, keeping nil nil.
func stringsCopy(in []string) []string {
	return slices.Clone(in)
}
