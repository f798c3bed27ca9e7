package v1

import (
	"encoding/json"
	"fmt"
	"strings"
)

// AppliedManifestWorkName returns the name of the AppliedManifestWork of the
// ManifestWork workName on the hub identified by hubHash: <hubHash>-<workName>.
func AppliedManifestWorkName(hubHash, workName string) string {
	return hubHash + "-" + workName
}

// ParseAppliedManifestWorkName splits an AppliedManifestWork name into the
// ManifestWork name, given the hub hash it must start with. It returns false
// when the name does not belong to that hub.
func ParseAppliedManifestWorkName(hubHash, name string) (workName string, ok bool) {
	prefix := hubHash + "-"
	if hubHash == "" || !strings.HasPrefix(name, prefix) || len(name) == len(prefix) {
		return "", false
	}
	return strings.TrimPrefix(name, prefix), true
}

// ManifestKey identifies the object of a manifest as the hub does when it
// refuses two manifests of one ManifestWork that name the same object:
// Kind[.group] [namespace/]name. The API group comes from apiVersion and the
// version does not count, as the work agent identifies the objects it
// applies. The admission policies in config/hub compute the same key in CEL.
func ManifestKey(apiVersion, kind, namespace, name string) string {
	group, _ := splitAPIVersion(apiVersion)
	return manifestKey(group, kind, namespace, name)
}

// Key returns the ManifestKey of the object m describes.
func (m ManifestResourceMeta) Key() string {
	return manifestKey(m.Group, m.Kind, m.Namespace, m.Name)
}

// manifestKey is ManifestKey from the API group.
func manifestKey(group, kind, namespace, name string) string {
	key := kind
	if group != "" {
		key += "." + group
	}
	key += " "
	if namespace != "" {
		key += namespace + "/"
	}
	return key + name
}

// splitAPIVersion returns the group and version of apiVersion; the core
// group ("v1") is "".
func splitAPIVersion(apiVersion string) (group, version string) {
	if group, version, found := strings.Cut(apiVersion, "/"); found {
		return group, version
	}
	return "", apiVersion
}

// ResourceMeta reads the identity of the manifest's object from its JSON
// (Raw, else Object): the group and version of its apiVersion, its kind,
// namespace and name. Resource and Ordinal stay unset: the resource of a kind
// takes a RESTMapper, and the ordinal is the manifest's place in its work.
func (m Manifest) ResourceMeta() (ManifestResourceMeta, error) {
	data := m.Raw
	if data == nil && m.Object != nil {
		var err error
		if data, err = json.Marshal(m.Object); err != nil {
			return ManifestResourceMeta{}, fmt.Errorf("encode manifest: %w", err)
		}
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return ManifestResourceMeta{}, fmt.Errorf("decode manifest: %w", err)
	}
	group, version := splitAPIVersion(obj.APIVersion)
	return ManifestResourceMeta{Group: group, Version: version, Kind: obj.Kind, Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name}, nil
}

// Matches reports whether the identifier selects the manifest described by
// meta. Group, resource, name and namespace must all be equal.
func (r ResourceIdentifier) Matches(meta ManifestResourceMeta) bool {
	return r.Group == meta.Group && r.Resource == meta.Resource &&
		r.Name == meta.Name && r.Namespace == meta.Namespace
}

// String returns the identifier as group/resource/namespace/name, with the
// core group written as "core" and cluster-scoped objects without a namespace.
func (r ResourceIdentifier) String() string {
	group := r.Group
	if group == "" {
		group = "core"
	}
	if r.Namespace == "" {
		return fmt.Sprintf("%s/%s/%s", group, r.Resource, r.Name)
	}
	return fmt.Sprintf("%s/%s/%s/%s", group, r.Resource, r.Namespace, r.Name)
}

// FindManifestConfig returns the manifest config whose resource identifier
// matches meta, or nil.
func (s *ManifestWorkSpec) FindManifestConfig(meta ManifestResourceMeta) *ManifestConfigOption {
	for i := range s.ManifestConfigs {
		if s.ManifestConfigs[i].ResourceIdentifier.Matches(meta) {
			return &s.ManifestConfigs[i]
		}
	}
	return nil
}

// PropagationPolicy returns the effective deletion propagation policy:
// Foreground when deleteOption or its policy is unset.
func (s *ManifestWorkSpec) PropagationPolicy() DeletePropagationPolicyType {
	if s.DeleteOption == nil || s.DeleteOption.PropagationPolicy == "" {
		return DeletePropagationPolicyTypeForeground
	}
	return s.DeleteOption.PropagationPolicy
}

// Orphans reports whether the delete option leaves the object id on the
// cluster when its ManifestWork is deleted or drops its manifest, as OCM's
// work agent does: Orphan orphans every object, SelectivelyOrphan the objects
// its orphaning rules name (group, resource, namespace and name all equal),
// and Foreground, the policy when the option or its policy is unset, none.
func (o *DeleteOption) Orphans(id ResourceIdentifier) bool {
	if o == nil {
		return false
	}
	switch o.PropagationPolicy {
	case DeletePropagationPolicyTypeOrphan:
		return true
	case DeletePropagationPolicyTypeSelectivelyOrphan:
		if o.SelectivelyOrphan == nil {
			return false
		}
		for _, r := range o.SelectivelyOrphan.OrphaningRules {
			if ResourceIdentifier(r) == id {
				return true
			}
		}
	}
	return false
}
