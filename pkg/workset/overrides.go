package workset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// Overrider computes the spec of each cluster's ManifestWork: the template
// with the overrides that choose the cluster applied in order.
type Overrider struct {
	template  workv1.ManifestWorkSpec
	overrides []workv1alpha1.ManifestWorkOverride
	selectors []labels.Selector
	// targets[i][j] are the indexes of the manifests patch j of override i patches.
	targets [][][]int
	// plainHash is the hash of the template itself, computed once for the
	// clusters no override chooses.
	plainHash string
}

// NewOverrider checks every override against the template, whichever
// clusters it chooses: a selector that does not parse, a patch that is not a
// JSON object, names no manifest of the template, or changes a manifest's
// identity is an error naming the override and patch.
func NewOverrider(spec *workv1alpha1.ManifestWorkReplicaSetSpec) (*Overrider, error) {
	o := &Overrider{template: spec.ManifestWorkTemplate, overrides: spec.Overrides}
	metas := make([]manifestMeta, len(o.template.Workload.Manifests))
	for i, m := range o.template.Workload.Manifests {
		mm, err := readManifestMeta(m.Raw)
		if err != nil {
			return nil, fmt.Errorf("manifest %d of the template: %w", i, err)
		}
		metas[i] = mm
	}
	for i, ov := range o.overrides {
		var sel labels.Selector
		if ov.ClusterSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(ov.ClusterSelector)
			if err != nil {
				return nil, fmt.Errorf("overrides[%d].clusterSelector: %w", i, err)
			}
			sel = s
		}
		o.selectors = append(o.selectors, sel)
		var targets [][]int
		for j, p := range ov.Patches {
			where := fmt.Sprintf("overrides[%d].patches[%d]", i, j)
			var obj map[string]any
			if err := json.Unmarshal(p.MergePatch.Raw, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("%s.mergePatch must be a JSON object (RFC 7386 merge patch): %v", where, errOr(err, "got "+string(p.MergePatch.Raw)))
			}
			var idx []int
			for k, mm := range metas {
				if mm.matches(p.ResourceIdentifier) {
					idx = append(idx, k)
				}
			}
			if len(idx) == 0 {
				return nil, fmt.Errorf("%s: no manifest of the template matches %s", where, describe(p.ResourceIdentifier))
			}
			targets = append(targets, idx)
		}
		o.targets = append(o.targets, targets)
	}
	// Apply every patch once to catch identity changes whatever the cluster.
	for i := range o.overrides {
		if _, err := o.apply(o.template.DeepCopy(), []int{i}); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// errOr returns err's text, or alt when err is nil.
func errOr(err error, alt string) string {
	if err != nil {
		return err.Error()
	}
	return alt
}

// chosen returns the indexes of the overrides that choose the cluster name
// with ManagedCluster labels lbls.
func (o *Overrider) chosen(name string, lbls map[string]string) []int {
	var out []int
	for i, ov := range o.overrides {
		if slices.Contains(ov.ClusterNames, name) || (o.selectors[i] != nil && o.selectors[i].Matches(labels.Set(lbls))) {
			out = append(out, i)
		}
	}
	return out
}

// NeedsLabels reports whether some override chooses clusters by label.
func (o *Overrider) NeedsLabels() bool {
	for _, s := range o.selectors {
		if s != nil {
			return true
		}
	}
	return false
}

// SpecFor returns the ManifestWork spec of the cluster name with
// ManagedCluster labels lbls and its hash. The spec must not be modified.
func (o *Overrider) SpecFor(name string, lbls map[string]string) (*workv1.ManifestWorkSpec, string, error) {
	which := o.chosen(name, lbls)
	if len(which) == 0 {
		// Shared by every plain cluster: callers copy before changing it.
		if o.plainHash == "" {
			h, err := specHash(&o.template)
			if err != nil {
				return nil, "", err
			}
			o.plainHash = h
		}
		return &o.template, o.plainHash, nil
	}
	spec, err := o.apply(o.template.DeepCopy(), which)
	if err != nil {
		return nil, "", err
	}
	h, err := specHash(spec)
	return spec, h, err
}

// apply applies the patches of the overrides which to spec, in order.
func (o *Overrider) apply(spec *workv1.ManifestWorkSpec, which []int) (*workv1.ManifestWorkSpec, error) {
	for _, i := range which {
		for j, p := range o.overrides[i].Patches {
			for _, k := range o.targets[i][j] {
				raw := spec.Workload.Manifests[k].Raw
				patched, err := jsonpatch.MergePatch(raw, p.MergePatch.Raw)
				if err != nil {
					return nil, fmt.Errorf("overrides[%d].patches[%d] on manifest %d: %w", i, j, k, err)
				}
				before, _ := readManifestMeta(raw)
				after, err := readManifestMeta(patched)
				if err != nil || after != before {
					return nil, fmt.Errorf("overrides[%d].patches[%d] must not change the apiVersion, kind, name or namespace of %s", i, j, describe(p.ResourceIdentifier))
				}
				spec.Workload.Manifests[k].Raw = patched
				spec.Workload.Manifests[k].Object = nil
			}
		}
	}
	return spec, nil
}

// specHash is a short hash of spec's JSON.
func specHash(spec *workv1.ManifestWorkSpec) (string, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hash ManifestWork spec: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// WithTakeOver is the hash of a work of spec hash whose take-over rule is
// rule: a set without the annotation keeps the spec's hash, so adding one
// rolls out as a template change does.
func WithTakeOver(hash, rule string) string {
	sum := sha256.Sum256([]byte(hash + "\x00" + workv1.TakeOverAnnotation + "=" + rule))
	return hex.EncodeToString(sum[:16])
}

// manifestMeta identifies a manifest.
type manifestMeta struct {
	apiVersion, kind, name, namespace string
}

// readManifestMeta reads the identity of a raw manifest.
func readManifestMeta(raw []byte) (manifestMeta, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return manifestMeta{}, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	return manifestMeta{apiVersion: u.GetAPIVersion(), kind: u.GetKind(), name: u.GetName(), namespace: u.GetNamespace()}, nil
}

// matches reports whether id selects m: same group, name and namespace, and
// the kind, or the resource guessed from the kind, as given.
func (m manifestMeta) matches(id workv1alpha1.ManifestResourceIdentifier) bool {
	gv, err := schema.ParseGroupVersion(m.apiVersion)
	if err != nil || gv.Group != id.Group || m.name != id.Name || m.namespace != id.Namespace {
		return false
	}
	if id.Kind != "" && id.Kind != m.kind {
		return false
	}
	if id.Resource != "" {
		plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(m.kind))
		if plural.Resource != id.Resource {
			return false
		}
	}
	return id.Kind != "" || id.Resource != ""
}

// describe writes id as group/resource-or-kind/namespace/name.
func describe(id workv1alpha1.ManifestResourceIdentifier) string {
	group, what := id.Group, id.Resource
	if group == "" {
		group = "core"
	}
	if what == "" {
		what = id.Kind
	}
	if id.Namespace == "" {
		return fmt.Sprintf("%s/%s/%s", group, what, id.Name)
	}
	return fmt.Sprintf("%s/%s/%s/%s", group, what, id.Namespace, id.Name)
}
