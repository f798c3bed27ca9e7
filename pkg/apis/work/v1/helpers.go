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
