package install

import (
	"maps"
	"testing"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

const (
	hosting = "addon.open-cluster-management.io/hosting-cluster-name"
	extra   = "addon.open-cluster-management.io/extra"
	disable = addonv1alpha1.DisableAddonAutomaticInstallationAnnotationKey
	copied  = addonv1alpha1.ClusterAnnotationsAnnotation
)

func TestMergeClusterAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		mca     map[string]string
		cluster map[string]string
		want    map[string]string
	}{
		{name: "nothing to copy", mca: nil, cluster: map[string]string{"other.io/x": "1"}, want: nil},
		{name: "added", mca: map[string]string{"team": "a"},
			cluster: map[string]string{hosting: "h1", "other.io/x": "1", "addon.open-cluster-management.iox/y": "no"},
			want:    map[string]string{"team": "a", hosting: "h1", copied: hosting}},
		{name: "changed", mca: map[string]string{hosting: "h1", copied: hosting},
			cluster: map[string]string{hosting: "h2", extra: "e"},
			want:    map[string]string{hosting: "h2", extra: "e", copied: extra + "," + hosting}},
		{name: "removed from the cluster", mca: map[string]string{hosting: "h1", extra: "e", copied: extra + "," + hosting},
			cluster: map[string]string{extra: "e"},
			want:    map[string]string{extra: "e", copied: extra}},
		{name: "all removed", mca: map[string]string{hosting: "h1", copied: hosting}, cluster: nil, want: nil},
		{name: "set on the add-on itself: kept", mca: map[string]string{disable: "true", hosting: "mine"}, cluster: nil,
			want: map[string]string{disable: "true", hosting: "mine"}},
		{name: "set on both: the cluster's value wins", mca: map[string]string{hosting: "mine"}, cluster: map[string]string{hosting: "h1"},
			want: map[string]string{hosting: "h1", copied: hosting}},
		{name: "a listed key outside the prefix is not removed", mca: map[string]string{"team": "a", copied: "team"}, cluster: nil,
			want: map[string]string{"team": "a"}},
		{name: "unchanged", mca: map[string]string{hosting: "h1", copied: hosting}, cluster: map[string]string{hosting: "h1"},
			want: map[string]string{hosting: "h1", copied: hosting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.mca)
			got := mergeClusterAnnotations(tt.mca, tt.cluster)
			if !maps.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("mergeClusterAnnotations(%v, %v) = %v, want %v", tt.mca, tt.cluster, got, tt.want)
			}
			if !maps.Equal(tt.mca, before) {
				t.Errorf("mergeClusterAnnotations changed its input to %v", tt.mca)
			}
		})
	}
}

func TestSyncsAnnotations(t *testing.T) {
	for strategy, want := range map[string]bool{
		"": false, addonv1alpha1.InstallStrategyManual: false, addonv1alpha1.InstallStrategyPlacements: true,
	} {
		if got := syncsAnnotations(newCMA(strategy)); got != want {
			t.Errorf("syncsAnnotations(install strategy %q) = %v, want %v", strategy, got, want)
		}
	}
}

func TestAddonAnnotationsChanged(t *testing.T) {
	tests := []struct {
		name     string
		old, cur map[string]string
		want     bool
	}{
		{name: "other annotation", old: map[string]string{"a": "1"}, cur: map[string]string{"a": "2"}, want: false},
		{name: "added", old: nil, cur: map[string]string{hosting: "h"}, want: true},
		{name: "changed", old: map[string]string{hosting: "h"}, cur: map[string]string{hosting: "g"}, want: true},
		{name: "removed", old: map[string]string{hosting: "h"}, cur: map[string]string{}, want: true},
		{name: "same", old: map[string]string{hosting: "h", "a": "1"}, cur: map[string]string{hosting: "h"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addonAnnotationsChanged(tt.old, tt.cur); got != tt.want {
				t.Errorf("addonAnnotationsChanged(%v, %v) = %v, want %v", tt.old, tt.cur, got, tt.want)
			}
		})
	}
}
