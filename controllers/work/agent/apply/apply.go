package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// hashAnnotation records, on an object applied with the Update strategy, the
// hash of the manifest content last applied.
const hashAnnotation = workv1.ObjectSpecHashAnnotationKey

// Applier applies manifests to the managed cluster with a dynamic client.
type Applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// NewApplier returns an Applier that writes with dyn and maps kinds with
// mapper. The mapper must look its API server up again on a miss, as the
// managers' mappers (controller-runtime's apiutil.NewDynamicRESTMapper) do,
// so that a CustomResourceDefinition applied a moment earlier, by the same
// ManifestWork or another, is found.
func NewApplier(dyn dynamic.Interface, mapper meta.RESTMapper) *Applier {
	return &Applier{dyn: dyn, mapper: mapper}
}

// Request is one manifest to apply.
type Request struct {
	// Manifest is the decoded manifest.
	Manifest *Manifest
	// Owner is the AppliedManifestWork's owner reference.
	Owner metav1.OwnerReference
	// Decide returns how to apply the manifest once its resource is known
	// (manifest configs and orphaning rules name resources, not kinds).
	Decide func(meta workv1.ManifestResourceMeta) Decision
	// Authorize, when set, is asked before anything is written whether the
	// work's executor may access the manifest's object as the apply needs;
	// its error fails the manifest without touching the object.
	Authorize func(ctx context.Context, access Access) error
}

// Access is what applying one manifest does to its object, for
// Request.Authorize.
type Access struct {
	// Meta identifies the object.
	Meta workv1.ManifestResourceMeta
	// Verbs are the API verbs the apply uses (see Verbs).
	Verbs []string
	// Strategy is the manifest's update strategy.
	Strategy workv1.UpdateStrategyType
	// Required is the object to write; Existing is the live one, nil when
	// the object does not exist.
	Required, Existing *unstructured.Unstructured
}

// WritesContent reports whether the apply writes the manifest's content
// (creates the object, or updates it with the Update or ServerSideApply
// strategy), as opposed to reading it or only adjusting its owner
// references.
func (a Access) WritesContent() bool {
	switch {
	case a.Strategy == workv1.UpdateStrategyTypeReadOnly:
		return false
	case a.Existing == nil:
		return true
	default:
		return a.Strategy != workv1.UpdateStrategyTypeCreateOnly
	}
}

// Decision is how one manifest is applied.
type Decision struct {
	// Strategy is the manifest's update strategy; nil means Update.
	Strategy *workv1.UpdateStrategy
	// Owned says whether the object carries the owner reference
	// (OwnedByTheWork); when false, the reference is removed if present.
	Owned bool
	// Frozen leaves the object alone: the manifest completed (a True
	// Complete condition) and is neither applied nor read again.
	Frozen bool
	// New says the work has not applied the object before (its
	// AppliedManifestWork does not list it). With the Update and CreateOnly
	// strategies and no Authorize, the apply then creates the object
	// without reading it first, and reads it only when it already exists:
	// one round trip instead of two for the objects a new work brings.
	New bool
	// TakeOver is the work's rule for a New object that exists and that the
	// work does not own (workv1.TakeOverAnnotation); empty means Always.
	TakeOver workv1.TakeOverRule
	// TakeOverInvalid is why the work's annotation holds no rule; such an
	// object is then left alone, with this reason.
	TakeOverInvalid error
	// DryRun makes every write a server-side dry run: Result.Object is the
	// object as the apply would leave it, and nothing is stored.
	DryRun bool
}

// StrategyType returns the effective update strategy type.
func (d Decision) StrategyType() workv1.UpdateStrategyType {
	if d.Strategy == nil || d.Strategy.Type == "" {
		return workv1.UpdateStrategyTypeUpdate
	}
	return d.Strategy.Type
}

// Result is the outcome of applying one manifest.
type Result struct {
	// Meta identifies the manifest and its object for the work's status.
	Meta workv1.ManifestResourceMeta
	// GVR is the object's resource; empty when the kind could not be mapped.
	GVR schema.GroupVersionResource
	// Object is the live object after the apply; nil when it does not exist.
	Object *unstructured.Unstructured
	// Err is why the apply failed; its message is the API server's.
	Err error
	// Strategy is the update strategy the manifest was applied with.
	Strategy workv1.UpdateStrategyType
	// Before is the live object as the apply found it; nil when it did not
	// exist (or could not be read).
	Before *unstructured.Unstructured
	// Change is what the apply did to the object.
	Change Change
	// Frozen says the manifest was left alone (Decision.Frozen).
	Frozen bool
}

// Change is what an apply did to the live object.
type Change string

const (
	// ChangeNone means the object already matched and was not written.
	ChangeNone Change = ""
	// ChangeCreated means the object did not exist and was created.
	ChangeCreated Change = "Created"
	// ChangeUpdated means the object existed and was written.
	ChangeUpdated Change = "Updated"
)

// changeOf tells what happened between before and after. An object of
// another UID than before was created: the one read was deleted before the
// write, which (a server-side apply patch) created it again.
func changeOf(before, after *unstructured.Unstructured) Change {
	switch {
	case after == nil:
		return ChangeNone
	case before == nil, before.GetUID() != after.GetUID():
		return ChangeCreated
	case before.GetResourceVersion() != after.GetResourceVersion():
		return ChangeUpdated
	default:
		return ChangeNone
	}
}

// Resource returns the status identity of the applied object, for the
// AppliedManifestWork.
func (r *Result) Resource() workv1.AppliedManifestResourceMeta {
	res := workv1.AppliedManifestResourceMeta{
		ResourceIdentifier: workv1.ResourceIdentifier{
			Group: r.GVR.Group, Resource: r.GVR.Resource, Name: r.Meta.Name, Namespace: r.Meta.Namespace,
		},
		Version: r.GVR.Version,
	}
	if r.Object != nil {
		res.UID = string(r.Object.GetUID())
	}
	return res
}

// Get reads the live object of a result whose resource is known.
func (a *Applier) Get(ctx context.Context, r *Result) (*unstructured.Unstructured, error) {
	return a.resourceFor(r.Resource()).Get(ctx, r.Meta.Name, metav1.GetOptions{})
}

// IsNoMatch reports whether the result failed because the kind is not (yet)
// served, for example while a CustomResourceDefinition is being established.
func (r *Result) IsNoMatch() bool { return r.Err != nil && meta.IsNoMatchError(r.Err) }

// Apply applies one manifest with its update strategy. It never panics on a
// bad manifest: every failure is in Result.Err.
func (a *Applier) Apply(ctx context.Context, req Request) Result {
	m := req.Manifest
	res := Result{Meta: m.ResourceMeta(schema.GroupVersionResource{}, "")}
	if m.Err != nil {
		res.Err = m.Err
		return res
	}
	required := prepare(m.Object)
	gvk := required.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		res.Meta.Namespace = required.GetNamespace()
		res.Err = err
		return res
	}
	res.GVR = mapping.Resource
	var ri dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if required.GetNamespace() == "" {
			required.SetNamespace(metav1.NamespaceDefault)
		}
		ri = a.dyn.Resource(mapping.Resource).Namespace(required.GetNamespace())
	} else {
		required.SetNamespace("")
	}
	res.Meta = m.ResourceMeta(mapping.Resource, required.GetNamespace())

	d := Decision{Owned: true}
	if req.Decide != nil {
		d = req.Decide(res.Meta)
	}
	res.Strategy = d.StrategyType()
	if d.DryRun {
		ri = dryRun{ri}
	}
	if d.Frozen {
		res.Frozen = true
		return res
	}
	if d.New && req.Authorize == nil && (res.Strategy == workv1.UpdateStrategyTypeUpdate || res.Strategy == workv1.UpdateStrategyTypeCreateOnly) {
		write(ctx, ri, &res, mapping.Resource.GroupResource(), nil, required.DeepCopy(), req.Owner, d)
		if !apierrors.IsAlreadyExists(res.Err) {
			return res
		}
		// It exists: read it and apply as to any existing object.
		res.Err = nil
	}
	existing, err := ri.Get(ctx, required.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		res.Err = err
		return res
	}
	res.Before = existing
	if err := takeOver(d, existing, required, req.Owner); err != nil {
		res.Err = err
		return res
	}
	if req.Authorize != nil {
		if err := req.Authorize(ctx, Access{Meta: res.Meta, Verbs: Verbs(res.Strategy, existing != nil),
			Strategy: res.Strategy, Required: required, Existing: existing}); err != nil {
			res.Err = err
			return res
		}
	}
	write(ctx, ri, &res, mapping.Resource.GroupResource(), existing, required, req.Owner, d)
	return res
}

// write applies required over existing (nil when the object is missing)
// with res.Strategy, and sets res.Object, res.Err and res.Change.
func write(ctx context.Context, ri dynamic.ResourceInterface, res *Result, gr schema.GroupResource, existing, required *unstructured.Unstructured, owner metav1.OwnerReference, d Decision) {
	switch res.Strategy {
	case workv1.UpdateStrategyTypeReadOnly:
		res.Object = existing
		if existing == nil {
			res.Err = apierrors.NewNotFound(gr, required.GetName())
		}
	case workv1.UpdateStrategyTypeCreateOnly:
		res.Object, res.Err = createOnly(ctx, ri, existing, required, owner, d.Owned)
	case workv1.UpdateStrategyTypeServerSideApply:
		res.Object, res.Err = serverSideApply(ctx, ri, existing, required, owner, d.Owned, d.Strategy.ServerSideApply)
	case workv1.UpdateStrategyTypeUpdate:
		res.Object, res.Err = update(ctx, ri, existing, required, owner, d.Owned)
	default:
		res.Err = fmt.Errorf("unknown update strategy %q", res.Strategy)
	}
	if res.Err != nil {
		res.Object = nil
	}
	res.Change = changeOf(res.Before, res.Object)
}

// Verbs returns the verbs an apply with strategy needs on an object that
// exists or not: get always; create for a missing object; update for an
// existing one (Update), patch for CreateOnly's owner reference and for
// server-side apply (which also creates).
func Verbs(strategy workv1.UpdateStrategyType, exists bool) []string {
	switch {
	case strategy == workv1.UpdateStrategyTypeReadOnly:
		return []string{"get"}
	case strategy == workv1.UpdateStrategyTypeServerSideApply && exists:
		return []string{"get", "patch"}
	case strategy == workv1.UpdateStrategyTypeServerSideApply:
		return []string{"get", "create", "patch"}
	case !exists:
		return []string{"get", "create"}
	case strategy == workv1.UpdateStrategyTypeCreateOnly:
		return []string{"get", "patch"}
	default:
		return []string{"get", "update"}
	}
}

// prepare returns a copy of the manifest without the metadata the API
// server owns.
func prepare(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	return out
}
