package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// work returns the metadata of a ManifestWork created for the
// ManifestWorkReplicaSet namespace/name.
func work(namespace, name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Labels: OwnerLabels(namespace, name), Annotations: OwnerAnnotations(namespace, name)}
}

func TestOwnerLabels(t *testing.T) {
	// "default." is 8 characters: names of 55 and 56 characters put
	// <namespace>.<name> at 63 (the longest label value) and 64.
	tests := []struct {
		name       string
		namespace  string
		mwrs       string
		wantShort  string // the manifestworkreplicaset label, "" for a hash
		wantHashed bool
	}{
		{name: "simple", namespace: "default", mwrs: "web", wantShort: "default.web"},
		{name: "name with dots", namespace: "apps", mwrs: "web.v2", wantShort: "apps.web.v2"},
		{name: "63 characters", namespace: "default", mwrs: strings.Repeat("a", 55), wantShort: "default." + strings.Repeat("a", 55)},
		{name: "64 characters", namespace: "default", mwrs: strings.Repeat("a", 56), wantHashed: true},
		{name: "long namespace", namespace: strings.Repeat("n", 63), mwrs: "web", wantHashed: true},
		{name: "253-character name", namespace: "default", mwrs: strings.Repeat("a", 253), wantHashed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels, annotations := OwnerLabels(tt.namespace, tt.mwrs), OwnerAnnotations(tt.namespace, tt.mwrs)
			if len(labels) != 1 {
				t.Fatalf("OwnerLabels() = %v, want one label", labels)
			}
			for k, v := range labels {
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("label %s=%q is not a valid label value: %v", k, v, errs)
				}
			}
			if tt.wantHashed {
				hash := labels[ManifestWorkReplicaSetOwnerKeyHashLabelKey]
				if len(hash) != 32 || hash != OwnerKeyHash(tt.namespace, tt.mwrs) {
					t.Errorf("OwnerLabels() = %v, want %s=<32 hex digits>", labels, ManifestWorkReplicaSetOwnerKeyHashLabelKey)
				}
				if got := annotations[ManifestWorkReplicaSetOwnerAnnotationKey]; got != tt.namespace+"/"+tt.mwrs {
					t.Errorf("owner annotation = %q, want %q", got, tt.namespace+"/"+tt.mwrs)
				}
			} else {
				if got := labels[ManifestWorkReplicaSetControllerNameLabelKey]; got != tt.wantShort {
					t.Errorf("OwnerLabels() = %v, want %s=%q", labels, ManifestWorkReplicaSetControllerNameLabelKey, tt.wantShort)
				}
				if annotations != nil {
					t.Errorf("OwnerAnnotations() = %v, want none: a short name keeps its works as they are", annotations)
				}
			}
			// From the work back to its set.
			ns, name, ok := OwnerOf(work(tt.namespace, tt.mwrs))
			if !ok || ns != tt.namespace || name != tt.mwrs {
				t.Errorf("OwnerOf() = %q, %q, %v; want %q, %q, true", ns, name, ok, tt.namespace, tt.mwrs)
			}
			if !Owns(tt.namespace, tt.mwrs, work(tt.namespace, tt.mwrs)) || !HasOwnerLabel(work(tt.namespace, tt.mwrs)) {
				t.Errorf("Owns() or HasOwnerLabel() false for the set's own work")
			}
			if Owns(tt.namespace, tt.mwrs+"x", work(tt.namespace, tt.mwrs)) {
				t.Errorf("Owns() true for another set")
			}
		})
	}
}

func TestOwnerKeyHash(t *testing.T) {
	// The value is stable (works written by one version are found by the
	// next): the first 32 digits of sha256sum of "default.web".
	if got, want := OwnerKeyHash("default", "web"), "50f2467a4ed521cf9131cfdf09d0fb9b"; got != want {
		t.Errorf("OwnerKeyHash(default, web) = %q, want %q", got, want)
	}
	if OwnerKeyHash("default", "web") == OwnerKeyHash("other", "web") {
		t.Error("OwnerKeyHash is the same for two namespaces")
	}
}

func TestOwnerOfRejects(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name string
		meta metav1.ObjectMeta
	}{
		{name: "no label", meta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}},
		{name: "short label without a dot", meta: metav1.ObjectMeta{Labels: map[string]string{ManifestWorkReplicaSetControllerNameLabelKey: "nodot"}}},
		{name: "hash without annotation", meta: metav1.ObjectMeta{Labels: OwnerLabels("default", long)}},
		{name: "annotation names another set", meta: metav1.ObjectMeta{Labels: OwnerLabels("default", long),
			Annotations: map[string]string{ManifestWorkReplicaSetOwnerAnnotationKey: "default/other"}}},
		{name: "annotation without a slash", meta: metav1.ObjectMeta{Labels: OwnerLabels("default", long),
			Annotations: map[string]string{ManifestWorkReplicaSetOwnerAnnotationKey: "default." + long}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ns, name, ok := OwnerOf(&tt.meta); ok {
				t.Errorf("OwnerOf() = %q, %q, true; want false", ns, name)
			}
		})
	}
}

func TestParseControllerNameLabelValueInvalid(t *testing.T) {
	for _, value := range []string{"", "nodot", ".name", "ns."} {
		t.Run(value, func(t *testing.T) {
			if ns, name, ok := ParseControllerNameLabelValue(value); ok {
				t.Errorf("ParseControllerNameLabelValue(%q) = %q, %q, true; want false", value, ns, name)
			}
		})
	}
}
