package apply

import (
	"context"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/secretdata"
)

// dryRun is a ResourceInterface whose writes are server-side dry runs: the
// API server admits and defaults them and returns the object as it would
// be, and stores nothing.
type dryRun struct {
	dynamic.ResourceInterface
}

var dryRunAll = []string{metav1.DryRunAll}

func (d dryRun) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = dryRunAll
	return d.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (d dryRun) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = dryRunAll
	return d.ResourceInterface.Update(ctx, obj, opts, sub...)
}

func (d dryRun) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = dryRunAll
	return d.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (d dryRun) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	opts.DryRun = dryRunAll
	return d.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
}

// Diff is the difference a dry-run apply found: a unified diff of the
// object's YAML, live then as it would be, leaving out what the API server
// and the work agent keep for themselves (resourceVersion, uid, generation,
// timestamps, managedFields, status, the agent's owner reference and content
// hash). Differs is false when nothing would change; Created when the
// object does not exist.
type Diff struct {
	Text    string
	Differs bool
	Created bool
}

// DiffOf compares the live object before (nil when missing) with after, the
// object a dry-run apply returned, for the object named name. A Secret's
// values are withheld: each says its size, and whether it changes
// (secretdata.Withhold), since the diff is written into the work's status,
// which more users read than may read the Secret.
func DiffOf(name string, before, after *unstructured.Unstructured) (Diff, error) {
	before, after = copyOf(before), copyOf(after)
	secretdata.Withhold("", before, after)
	from, err := diffYAML(before)
	if err != nil {
		return Diff{}, err
	}
	to, err := diffYAML(after)
	if err != nil {
		return Diff{}, err
	}
	d := Diff{Created: before == nil && after != nil}
	if from == to {
		return d, nil
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(from), B: difflib.SplitLines(to),
		FromFile: "live/" + name, ToFile: "applied/" + name, Context: 3,
	})
	if err != nil {
		return Diff{}, err
	}
	d.Text, d.Differs = text, true
	if len(d.Text) > workv1.DiffMessageLimit {
		cut := strings.LastIndexByte(d.Text[:workv1.DiffMessageLimit], '\n')
		d.Text = d.Text[:cut+1] + "... (diff cut at 30000 bytes)\n"
	}
	return d, nil
}

// copyOf returns a copy of obj, nil for nil.
func copyOf(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	return obj.DeepCopy()
}

// diffYAML renders o, a copy it may change, for the diff, "" for nil.
func diffYAML(o *unstructured.Unstructured) (string, error) {
	if o == nil {
		return "", nil
	}
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(o.Object, "status")
	if a := o.GetAnnotations(); a != nil {
		delete(a, hashAnnotation)
		if len(a) == 0 {
			a = nil
		}
		o.SetAnnotations(a)
	}
	var refs []metav1.OwnerReference
	for _, r := range o.GetOwnerReferences() {
		if r.Kind != "AppliedManifestWork" {
			refs = append(refs, r)
		}
	}
	o.SetOwnerReferences(refs)
	out, err := yaml.Marshal(o.Object)
	return string(out), err
}
