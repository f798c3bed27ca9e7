package revision

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
