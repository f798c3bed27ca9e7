// Package config resolves the configurations of an add-on on one cluster and
// fingerprints them, as OCM's add-on manager does: the rules the hub's
// config, rollout and deploy controllers and `kubectl ocm addon get` share.
//
// A configuration is any object an add-on names in its
// ClusterManagementAddOn's supportedConfigs, an install strategy placement's
// configs or a ManagedClusterAddOn's spec.configs: an AddOnDeploymentConfig,
// an AddOnTemplate, or a kind of the add-on's own.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Key identifies one configuration object.
type Key struct {
	addonv1alpha1.ConfigGroupResource
	addonv1alpha1.ConfigReferent
}

// String spells the key as <resource>.<group>/<namespace>/<name> (the
// namespace empty for cluster-scoped kinds), the form used in the
// config-spec-hash annotation of an add-on's ManifestWorks.
func (k Key) String() string {
	gr := k.Resource
	if k.Group != "" {
		gr += "." + k.Group
	}
	return gr + "/" + k.Namespace + "/" + k.Name
}

// KeyOf returns the key of a configuration reference.
func KeyOf(c addonv1alpha1.AddOnConfig) Key {
	return Key{ConfigGroupResource: c.ConfigGroupResource, ConfigReferent: c.ConfigReferent}
}

// SpecHash returns OCM's spec hash of a configuration object: the hex
// SHA-256 of the JSON of the object without apiVersion, kind, metadata and
// status (for most kinds {"spec": ...}), as addon-framework's GetSpecHash
// computes it. obj must be the object as served at the version OCM reads
// it (HashedVersion), unchanged: OCM's add-on managers write the same hash
// into the same status fields, and a different one would make the two
// writers undo each other. Two objects have the same hash exactly when a
// deployed agent would be configured the same by them.
func SpecHash(obj *unstructured.Unstructured) (string, error) {
	content := maps.Clone(obj.Object)
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		delete(content, k)
	}
	data, err := json.Marshal(content) // map keys are sorted: the hash is stable
	if err != nil {
		return "", fmt.Errorf("hash the spec of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// BuiltinKind returns the group, version and kind at which the built-in
// configuration kind of resource (addondeploymentconfigs or addontemplates)
// is read and hashed (HashedVersion).
func BuiltinKind(resource string) schema.GroupVersionKind {
	gvk, _ := HashedVersion(addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: resource})
	return gvk
}

// hashedVersions are the versions at which OCM reads the built-in
// configuration kinds to hash them: addon-framework watches
// AddOnDeploymentConfigs at v1beta1 and AddOnTemplates at v1alpha1.
var hashedVersions = map[addonv1alpha1.ConfigGroupResource]schema.GroupVersionKind{
	{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource}: {
		Group: addonv1alpha1.GroupVersion.Group, Version: "v1beta1", Kind: "AddOnDeploymentConfig"},
	{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource}: {
		Group: addonv1alpha1.GroupVersion.Group, Version: "v1alpha1", Kind: "AddOnTemplate"},
}

// HashedVersion returns the group, version and kind at which configurations
// of kind gr are read to be hashed, for the built-in kinds; ok is false for
// other kinds, which are read at the version the API server prefers.
func HashedVersion(gr addonv1alpha1.ConfigGroupResource) (gvk schema.GroupVersionKind, ok bool) {
	gvk, ok = hashedVersions[gr]
	return gvk, ok
}

// Resolved is one configuration of an add-on on a cluster.
type Resolved struct {
	Key
	// Supported reports whether the add-on supports the kind (Supports). An unsupported kind is kept, so that it can be
	// reported, but is never deployed.
	Supported bool
}

// Resolve returns the configurations of the add-on of cma on a cluster, by
// OCM's precedence: the defaults of cma's supportedConfigs, overridden per
// kind (group and resource) by the configs of each install strategy
// placement that decides the cluster, a later placement winning, overridden
// per kind by the ManagedClusterAddOn's spec.configs. placements holds the
// configs of the placements that decide the cluster, in the order of
// cma.Spec.InstallStrategy.Placements; mca may be nil. A source that names
// several configurations of one kind replaces all of that kind. The result
// is ordered by kind, then in the order the winning source lists them.
func Resolve(cma *addonv1alpha1.ClusterManagementAddOn, placements [][]addonv1alpha1.AddOnConfig, mca *addonv1alpha1.ManagedClusterAddOn) []Resolved {
	byKind := map[addonv1alpha1.ConfigGroupResource][]Key{}
	for _, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig != nil {
			byKind[sc.ConfigGroupResource] = []Key{{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig}}
		}
	}
	override := func(configs []addonv1alpha1.AddOnConfig) {
		given := map[addonv1alpha1.ConfigGroupResource][]Key{}
		for _, c := range configs {
			given[c.ConfigGroupResource] = append(given[c.ConfigGroupResource], KeyOf(c))
		}
		maps.Copy(byKind, given)
	}
	for _, configs := range placements {
		override(configs)
	}
	if mca != nil {
		override(mca.Spec.Configs)
	}
	kinds := slices.SortedFunc(maps.Keys(byKind), func(a, b addonv1alpha1.ConfigGroupResource) int {
		return strings.Compare(a.Group+"/"+a.Resource, b.Group+"/"+b.Resource)
	})
	var out []Resolved
	for _, gr := range kinds {
		supported := Supports(cma, gr)
		for _, k := range byKind[gr] {
			out = append(out, Resolved{Key: k, Supported: supported})
		}
	}
	return out
}

// BuiltinKinds are the configuration kinds every add-on the hub deploys
// supports, listed in its ClusterManagementAddOn's supportedConfigs or not,
// as OCM's template add-ons support them: AddOnDeploymentConfig and
// AddOnTemplate.
var BuiltinKinds = []addonv1alpha1.ConfigGroupResource{
	{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource},
	{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
}

// Supports reports whether the add-on of cma supports the configuration
// kind gr: a built-in kind, or one cma lists in its supportedConfigs.
func Supports(cma *addonv1alpha1.ClusterManagementAddOn, gr addonv1alpha1.ConfigGroupResource) bool {
	return slices.Contains(BuiltinKinds, gr) ||
		slices.ContainsFunc(cma.Spec.SupportedConfigs, func(sc addonv1alpha1.ConfigMeta) bool { return sc.ConfigGroupResource == gr })
}

// SupportedKinds returns the configuration kinds the add-on of cma
// supports: those of its supportedConfigs, then the built-in kinds it does
// not list. It is what a ManagedClusterAddOn's status.supportedConfigs says.
func SupportedKinds(cma *addonv1alpha1.ClusterManagementAddOn) []addonv1alpha1.ConfigGroupResource {
	out := make([]addonv1alpha1.ConfigGroupResource, 0, len(cma.Spec.SupportedConfigs)+len(BuiltinKinds))
	for _, sc := range cma.Spec.SupportedConfigs {
		out = append(out, sc.ConfigGroupResource)
	}
	for _, gr := range BuiltinKinds {
		if !slices.Contains(out, gr) {
			out = append(out, gr)
		}
	}
	return out
}

// Hashes maps config keys (Key.String) to spec hashes: what a deployed
// agent was rendered from, or what it should be rendered from.
type Hashes map[string]string

// Desired returns the desired configurations recorded in mca's
// status.configReferences, with their spec hashes.
func Desired(mca *addonv1alpha1.ManagedClusterAddOn) Hashes {
	out := Hashes{}
	for _, ref := range mca.Status.ConfigReferences {
		if ref.DesiredConfig == nil {
			continue
		}
		k := Key{ConfigGroupResource: ref.ConfigGroupResource, ConfigReferent: ref.DesiredConfig.ConfigReferent}
		out[k.String()] = ref.DesiredConfig.SpecHash
	}
	return out
}

// Annotation encodes h as the value of the config-spec-hash annotation
// (workv1.ConfigSpecHashAnnotationKey) of an add-on's ManifestWorks.
func (h Hashes) Annotation() string {
	data, err := json.Marshal(map[string]string(h)) // keys sorted
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return string(data)
}

// FromAnnotations decodes the config-spec-hash annotation of a ManifestWork;
// a missing or malformed annotation decodes as no configuration.
func FromAnnotations(annotations map[string]string) Hashes {
	out := Hashes{}
	if v := annotations[workv1.ConfigSpecHashAnnotationKey]; v != "" {
		_ = json.Unmarshal([]byte(v), &out)
	}
	return out
}

// Equal reports whether h and other hold the same configurations with the
// same hashes.
func (h Hashes) Equal(other Hashes) bool { return maps.Equal(h, other) }
