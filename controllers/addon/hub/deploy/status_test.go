package deploy

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// appliedWork returns a work at generation 2 whose Applied condition has
// status, observed at generation observed (no condition when status is empty).
func appliedWork(name string, status metav1.ConditionStatus, observed int64) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2}}
	if status != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: status, ObservedGeneration: observed, Message: "why"}}
	}
	return w
}

func TestSetManifestApplied(t *testing.T) {
	cases := []struct {
		name       string
		works      []*workv1.ManifestWork
		wantStatus metav1.ConditionStatus // empty: unchanged
		wantReason string
	}{
		{name: "no work: unchanged"},
		{name: "every work applied", works: []*workv1.ManifestWork{appliedWork("a", "True", 2), appliedWork("b", "True", 2)},
			wantStatus: "True", wantReason: addonv1alpha1.ManifestAppliedReasonManifestsApplied},
		{name: "one work not applied", works: []*workv1.ManifestWork{appliedWork("a", "True", 2), appliedWork("b", "False", 2)},
			wantStatus: "False", wantReason: addonv1alpha1.ManifestAppliedReasonManifestsApplyFailed},
		{name: "one work without report: unchanged", works: []*workv1.ManifestWork{appliedWork("a", "True", 2), appliedWork("b", "", 0)}},
		{name: "one work reporting on its former spec: unchanged", works: []*workv1.ManifestWork{appliedWork("a", "False", 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			setManifestApplied(mca, tc.works)
			c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied)
			switch {
			case tc.wantStatus == "" && c != nil:
				t.Errorf("ManifestApplied set to %+v, want unchanged", c)
			case tc.wantStatus != "" && (c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason):
				t.Errorf("ManifestApplied %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

func TestHookCompleted(t *testing.T) {
	job := workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "ns", Name: "j"}
	pod := workv1.ResourceIdentifier{Resource: "pods", Namespace: "ns", Name: "p"}
	hook := func(available bool, values map[workv1.ResourceIdentifier][2]string, ids ...workv1.ResourceIdentifier) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		for _, id := range ids {
			w.Spec.ManifestConfigs = append(w.Spec.ManifestConfigs, workv1.ManifestConfigOption{ResourceIdentifier: id})
		}
		if available {
			w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue}}
		}
		for id, v := range values {
			w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
				ResourceMeta:    workv1.ManifestResourceMeta{Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: v[0], Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v[1])}}}},
			})
		}
		return w
	}
	done := map[workv1.ResourceIdentifier][2]string{job: {"JobComplete", "True"}, pod: {"PodPhase", "Succeeded"}}
	cases := []struct {
		name string
		w    *workv1.ManifestWork
		want bool
	}{
		{"Job complete and Pod succeeded", hook(true, done, job, pod), true},
		{"work not available", hook(false, done, job, pod), false},
		{"Job running", hook(true, map[workv1.ResourceIdentifier][2]string{job: {"JobComplete", "False"}, pod: done[pod]}, job, pod), false},
		{"Pod running", hook(true, map[workv1.ResourceIdentifier][2]string{job: done[job], pod: {"PodPhase", "Running"}}, job, pod), false},
		{"no feedback yet", hook(true, nil, job), false},
		{"no manifest config", hook(true, done), false},
	}
	for _, tc := range cases {
		if got := hookCompleted(tc.w); got != tc.want {
			t.Errorf("%s: hookCompleted = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSetRelatedObjects(t *testing.T) {
	group := addonv1alpha1.GroupVersion.Group
	cma := addonv1alpha1.ObjectReference{Group: group, Resource: "clustermanagementaddons", Name: "hello"}
	tpl := func(name string) addonv1alpha1.ObjectReference {
		return addonv1alpha1.ObjectReference{Group: group, Resource: "addontemplates", Name: name}
	}
	other := addonv1alpha1.ObjectReference{Group: "example.com", Resource: "things", Name: "x"}
	cases := []struct {
		name     string
		existing []addonv1alpha1.ObjectReference
		want     []addonv1alpha1.ObjectReference
	}{
		{"none yet", nil, []addonv1alpha1.ObjectReference{cma, tpl("v2")}},
		{"already there", []addonv1alpha1.ObjectReference{cma, tpl("v2")}, []addonv1alpha1.ObjectReference{cma, tpl("v2")}},
		{"a former template replaced, others kept", []addonv1alpha1.ObjectReference{other, tpl("v1"), cma},
			[]addonv1alpha1.ObjectReference{other, cma, tpl("v2")}},
	}
	for _, tc := range cases {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
		mca.Status.RelatedObjects = tc.existing
		setRelatedObjects(mca, "v2")
		if !reflect.DeepEqual(mca.Status.RelatedObjects, tc.want) {
			t.Errorf("%s: related objects %v, want %v", tc.name, mca.Status.RelatedObjects, tc.want)
		}
	}
}
