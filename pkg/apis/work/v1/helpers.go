package v1

import (
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
	key := kind
	if group, _, found := strings.Cut(apiVersion, "/"); found {
		key += "." + group
	}
	key += " "
	if namespace != "" {
		key += namespace + "/"
	}
	return key + name
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
