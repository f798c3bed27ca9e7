package conversion

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlconversion "sigs.k8s.io/controller-runtime/pkg/conversion"

	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// TestSeedsRoundTrip writes every add-on object of the seeds 001-* and 003-*
// at v1alpha1, as clusteradm does, and reads each back at v1alpha1 (every
// field the seed wrote is there, unchanged) and at v1beta1 (what the
// project's own conversion of the v1alpha1 object gives, so the API server
// converts through the webhook and nothing is lost on the way back).
func TestSeedsRoundTrip(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	s.install(t)
	s.startWebhook(t, addonconversion.Options{})
	s.createNamespaces(t, "cluster1", "open-cluster-management")
	files := append(seeds.Names("001-*.yaml"), seeds.Names("003-*.yaml")...)
	checked := 0
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			for _, obj := range seeds.Read(t, file) {
				if obj.GroupVersionKind().GroupVersion() != addonv1alpha1.GroupVersion {
					continue
				}
				checked++
				if err := s.admin.Create(s.ctx, obj.DeepCopy()); err != nil {
					t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				alpha := s.read(t, obj, "v1alpha1")
				for _, field := range []string{"spec", "metadata"} {
					for _, d := range subset(field, obj.Object[field], alpha.Object[field]) {
						t.Errorf("%s %s at v1alpha1: %s", obj.GetKind(), obj.GetName(), d)
					}
				}
				beta := s.read(t, obj, "v1beta1")
				want := goConversion(t, alpha)
				for _, field := range []string{"spec"} {
					if !reflect.DeepEqual(want.Object[field], beta.Object[field]) {
						t.Errorf("%s %s at v1beta1: %s is\n%v\nwant (ConvertTo of the v1alpha1 object)\n%v", obj.GetKind(), obj.GetName(), field, beta.Object[field], want.Object[field])
					}
				}
				if !reflect.DeepEqual(want.GetAnnotations(), beta.GetAnnotations()) {
					t.Errorf("%s %s at v1beta1: annotations %v, want %v", obj.GetKind(), obj.GetName(), beta.GetAnnotations(), want.GetAnnotations())
				}
				if err := s.admin.Delete(s.ctx, alpha); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("the seeds hold no add-on object")
	}
}

// goConversion converts the v1alpha1 object u to v1beta1 with the types'
// own ConvertTo, unstructured.
func goConversion(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	src, err := apis.Scheme.New(u.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, src); err != nil {
		t.Fatal(err)
	}
	dst, err := apis.Scheme.New(addonv1beta1.GroupVersion.WithKind(u.GetKind()))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.(ctrlconversion.Convertible).ConvertTo(dst.(ctrlconversion.Hub)); err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dst)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// subset returns where got lacks or differs from a value of want, a JSON
// tree (lists compared element by element, durations by their length).
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s is %v, want an object", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, subset(path+"."+k, v, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s is %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if sameDuration(want, got) {
			return nil
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{fmt.Sprintf("%s is %v, want %v", path, got, want)}
		}
		return nil
	}
}

// sameDuration reports whether want and got are duration strings of the
// same length of time: a metav1.Duration reads "5m" and writes "5m0s", in
// OCM as here.
func sameDuration(want, got any) bool {
	w, okW := want.(string)
	g, okG := got.(string)
	if !okW || !okG {
		return false
	}
	dw, errW := time.ParseDuration(w)
	dg, errG := time.ParseDuration(g)
	return errW == nil && errG == nil && dw == dg
}
