package revision

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

func TestContent(t *testing.T) {
	set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)}}}
	data, hash, err := Of(set).Encode()
	if err != nil {
		t.Fatal(err)
	}
	_, again, _ := Of(set.DeepCopy()).Encode()
	if again != hash || len(hash) != 10 {
		t.Errorf("hash %q then %q: want the same 10 characters", hash, again)
	}
	set.Annotations = map[string]string{workv1.TakeOverAnnotation: "Never"}
	_, withRule, _ := Of(set).Encode()
	if withRule == hash {
		t.Errorf("the take-over rule does not change the hash")
	}
	got, err := Decode(&appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: data}})
	if err != nil || len(got.Template.Workload.Manifests) != 1 || got.TakeOver != "" {
		t.Errorf("Decode = %+v, %v", got, err)
	}
}

func TestHistoryLimit(t *testing.T) {
	for v, want := range map[string]int{"": DefaultHistoryLimit, "0": 0, "3": 3, "-1": -1, "x": -1} {
		set := &workv1alpha1.ManifestWorkReplicaSet{}
		if v != "" {
			set.Annotations = map[string]string{HistoryLimitAnnotation: v}
		}
		got, err := HistoryLimit(set)
		if want < 0 {
			if err == nil {
				t.Errorf("HistoryLimit(%q) = %d, want an error", v, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("HistoryLimit(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
}

func TestSetLabelValue(t *testing.T) {
	tests := []struct {
		name      string
		set       string
		wantWhole bool
	}{
		{name: "short", set: "web", wantWhole: true},
		{name: "63 characters", set: strings.Repeat("a", 63), wantWhole: true},
		{name: "64 characters", set: strings.Repeat("a", 64)},
		{name: "253 characters", set: strings.Repeat("a.b", 84) + "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SetLabelValue(tt.set)
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Fatalf("SetLabelValue() = %q, not a label value: %v", got, errs)
			}
			if (got == tt.set) != tt.wantWhole {
				t.Errorf("SetLabelValue(%d characters) = %q, want the name itself: %v", len(tt.set), got, tt.wantWhole)
			}
			if !tt.wantWhole && (!strings.HasPrefix(got, "set_") || got == SetLabelValue(tt.set+"x")) {
				t.Errorf("SetLabelValue(%d characters) = %q, want set_ and a hash of the name", len(tt.set), got)
			}
		})
	}
}

func TestName(t *testing.T) {
	const hash = "0123456789"
	if got := Name("web", hash); got != "web-"+hash {
		t.Errorf("Name(web) = %q, want web-%s", got, hash)
	}
	// 242 characters and the hash make exactly 253.
	whole := strings.Repeat("a", 242)
	if got := Name(whole, hash); got != whole+"-"+hash {
		t.Errorf("Name(242 characters) = %q, want the name and the hash", got)
	}
	long, other := strings.Repeat("a", 243), strings.Repeat("a", 250)
	for _, set := range []string{long, other} {
		got := Name(set, hash)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || !strings.HasSuffix(got, "-"+hash) {
			t.Errorf("Name(%d characters) = %q: %v", len(set), got, errs)
		}
	}
	if Name(long, hash) == Name(other, hash) {
		t.Errorf("two long set names sharing their first 200 characters get the same revision name")
	}
}
