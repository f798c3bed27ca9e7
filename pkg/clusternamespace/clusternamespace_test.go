package clusternamespace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

const hubManager = "ocm-hub-controller"

// clusterAt returns ManagedCluster c1 of UID uid created at created.
func clusterAt(uid string, created time.Time) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: types.UID("uid-" + uid), CreationTimestamp: metav1.NewTime(created)}}
}

// namespace returns namespace c1 created at created with annotations
// (key=value pairs) and, with labeler, its cluster-name label applied by
// that field manager.
func namespace(created time.Time, labeler string, annotations ...string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1", CreationTimestamp: metav1.NewTime(created), Annotations: map[string]string{}}}
	for i := 0; i+1 < len(annotations); i += 2 {
		ns.Annotations[annotations[i]] = annotations[i+1]
	}
	if labeler != "" {
		ns.Labels = map[string]string{clusterv1.ClusterNameLabelKey: "c1"}
		fields, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:" + clusterv1.ClusterNameLabelKey: map[string]any{}}}})
		ns.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: labeler, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(fields))}}
	}
	return ns
}

func TestOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cluster := clusterAt("a", t0)
	tests := []struct {
		name string
		ns   *corev1.Namespace
		want Standing
	}{
		{"created for this cluster", namespace(t0, "", OwnerAnnotation, "uid-a"), Owned},
		{"adopted for this cluster", namespace(t0.Add(-time.Hour), "", AdoptedAnnotation, "uid-a"), Adopted},
		{"someone's namespace", namespace(t0.Add(-time.Hour), ""), Foreign},
		{"someone's namespace created after the cluster", namespace(t0.Add(time.Hour), ""), Foreign},
		{"created for an earlier cluster of the name", namespace(t0, "", OwnerAnnotation, "uid-b"), Foreign},
		{"adopted for an earlier cluster of the name", namespace(t0, "", AdoptedAnnotation, "uid-b"), Foreign},
		{"created for another, adopted for this one", namespace(t0, "", OwnerAnnotation, "uid-b", AdoptedAnnotation, "uid-a"), Foreign},
		{"labeled by someone else", namespace(t0, "kubectl"), Foreign},
		{"an earlier release's namespace", namespace(t0.Add(time.Hour), hubManager), Owned},
		{"an earlier release's namespace, written just before the cluster", namespace(t0.Add(-30*time.Second), hubManager), Owned},
		{"an older namespace an earlier release labeled", namespace(t0.Add(-time.Hour), hubManager), Foreign},
		{"an earlier release's namespace, marked for another cluster", namespace(t0.Add(time.Hour), hubManager, OwnerAnnotation, "uid-b"), Foreign},
		{"prepared for the cluster of the name", namespace(t0.Add(-time.Hour), "", PreparedAnnotation, "c1"), Prepared},
		{"prepared for another name", namespace(t0.Add(-time.Hour), "", PreparedAnnotation, "c2"), Foreign},
		{"prepared, then adopted for an earlier cluster", namespace(t0.Add(-time.Hour), "", PreparedAnnotation, "c1", AdoptedAnnotation, "uid-b"), Foreign},
		{"the Pod Security setter is no mark", namespace(t0, "", podsecurity.SetByAnnotation, podsecurity.SetByHub), Foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.ns, cluster, hubManager); got != tt.want {
				t.Errorf("Of = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	ns := New("c1", "uid-a")
	if ns.Labels[clusterv1.ClusterNameLabelKey] != "c1" || !podsecurity.EnforcesRestricted(ns.Labels) ||
		ns.Annotations[podsecurity.SetByAnnotation] != podsecurity.SetByHub || ns.Annotations[OwnerAnnotation] != "uid-a" {
		t.Errorf("New = labels %v, annotations %v", ns.Labels, ns.Annotations)
	}
	if Of(ns, clusterAt("a", time.Now()), hubManager) != Owned {
		t.Error("the namespace New renders is not its cluster's")
	}
	if _, ok := New("c1", "").Annotations[OwnerAnnotation]; ok {
		t.Error("New without a UID marks the namespace")
	}
}

func TestAdoptionPatch(t *testing.T) {
	var p struct {
		Metadata struct {
			Annotations map[string]*string `json:"annotations"`
			Labels      map[string]string  `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(AdoptionPatch(clusterAt("a", time.Now())), &p); err != nil {
		t.Fatal(err)
	}
	a := p.Metadata.Annotations
	if len(a) != 2 || a[AdoptedAnnotation] == nil || *a[AdoptedAnnotation] != "uid-a" || a[PreparedAnnotation] != nil ||
		len(p.Metadata.Labels) != 1 || p.Metadata.Labels[clusterv1.ClusterNameLabelKey] != "c1" {
		t.Errorf("AdoptionPatch = %+v, want only the adoption mark, the prepared mark removed and the cluster-name label", p.Metadata)
	}
}

func TestConflict(t *testing.T) {
	cluster := clusterAt("a", time.Now())
	for name, tt := range map[string]struct {
		ns   *corev1.Namespace
		says []string
	}{
		"someone's":            {namespace(time.Now(), ""), []string{"namespace c1 exists", "kubectl annotate namespace c1 " + AdoptedAnnotation + "=uid-a", "delete the ManagedCluster"}},
		"an earlier cluster's": {namespace(time.Now(), "", OwnerAnnotation, "uid-b"), []string{"earlier ManagedCluster c1 (UID uid-b", "Delete namespace c1"}},
		"adopted for another":  {namespace(time.Now(), "", AdoptedAnnotation, "uid-b"), []string{"adopted for another ManagedCluster c1 (UID uid-b"}},
	} {
		msg := Conflict(tt.ns, cluster)
		for _, s := range tt.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: Conflict = %q, want it to say %q", name, msg, s)
			}
		}
	}
}
