package config

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

// wantCRDs is every CRD the project ships, with the versions it serves, the
// storage version first.
var wantCRDs = map[string][]string{
	"addondeploymentconfigs.addon.open-cluster-management.io":      {"v1beta1", "v1alpha1"},
	"addontemplates.addon.open-cluster-management.io":              {"v1beta1", "v1alpha1"},
	"clustermanagementaddons.addon.open-cluster-management.io":     {"v1beta1", "v1alpha1"},
	"managedclusteraddons.addon.open-cluster-management.io":        {"v1beta1", "v1alpha1"},
	"addonplacementscores.cluster.open-cluster-management.io":      {"v1alpha1"},
	"clusterclaims.cluster.open-cluster-management.io":             {"v1alpha1"},
	"managedclusters.cluster.open-cluster-management.io":           {"v1"},
	"managedclustersetbindings.cluster.open-cluster-management.io": {"v1beta2", "v1beta1"},
	"managedclustersets.cluster.open-cluster-management.io":        {"v1beta2", "v1beta1"},
	"placementdecisions.cluster.open-cluster-management.io":        {"v1beta1"},
	"placements.cluster.open-cluster-management.io":                {"v1beta1"},
	"clustermanagers.operator.open-cluster-management.io":          {"v1"},
	"klusterlets.operator.open-cluster-management.io":              {"v1"},
	"appliedmanifestworks.work.open-cluster-management.io":         {"v1"},
	"manifestworkreplicasets.work.open-cluster-management.io":      {"v1alpha1"},
	"manifestworks.work.open-cluster-management.io":                {"v1"},
	"clusterprofiles.multicluster.x-k8s.io":                        {"v1alpha1"},
	"placementdecisions.multicluster.x-k8s.io":                     {"v1alpha1"},
	"rolloutapprovals.rollout.kubectl-ocm.io":                      {"v1alpha1"},
	"manifestchunks.work.kubectl-ocm.io":                           {"v1alpha1"},
}

func TestCRDsDecodeEveryFile(t *testing.T) {
	files, err := fs.Glob(crdFiles, crdDir+"/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crds, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs() error: %v", err)
	}
	if len(crds) != len(files) {
		t.Errorf("CRDs() returned %d CRDs for %d embedded files", len(crds), len(files))
	}
	if len(crds) != len(wantCRDs) {
		t.Errorf("CRDs() returned %d CRDs, want %d", len(crds), len(wantCRDs))
	}
	if !slices.IsSortedFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return strings.Compare(a.Name, b.Name)
	}) {
		t.Error("CRDs() is not sorted by name")
	}
	for _, crd := range crds {
		t.Run(crd.Name, func(t *testing.T) {
			want, ok := wantCRDs[crd.Name]
			if !ok {
				t.Fatalf("unexpected CRD %s", crd.Name)
			}
			var served []string
			storage := ""
			for _, v := range crd.Spec.Versions {
				if v.Served {
					served = append(served, v.Name)
				}
				if v.Storage {
					storage = v.Name
				}
			}
			if storage != want[0] {
				t.Errorf("storage version = %q, want %q", storage, want[0])
			}
			slices.Sort(served)
			wantServed := slices.Sorted(slices.Values(want))
			if !slices.Equal(served, wantServed) {
				t.Errorf("served versions = %v, want %v", served, wantServed)
			}
		})
	}
}

// TestCRDsHaveNoTypographicQuotes guards against gofmt's doc comment
// formatting, which turns two apostrophes in a row in a kubebuilder marker into a
// closing quotation mark and so silently breaks a CEL rule.
func TestCRDsHaveNoTypographicQuotes(t *testing.T) {
	files, err := fs.Glob(crdFiles, crdDir+"/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := crdFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(string(data), "\u201c\u201d") {
			t.Errorf("%s contains a typographic quotation mark; write empty strings as \"\" in a backquoted rule", f)
		}
	}
}

func TestCRDsReturnsFreshObjects(t *testing.T) {
	first, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	first[0].Name = "modified"
	second, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if second[0].Name == "modified" {
		t.Error("CRDs() returned a shared object")
	}
}

func TestHubAndManagedClusterSplit(t *testing.T) {
	all, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := HubCRDs()
	if err != nil {
		t.Fatal(err)
	}
	managed, err := ManagedClusterCRDs()
	if err != nil {
		t.Fatal(err)
	}
	names := func(crds []*apiextensionsv1.CustomResourceDefinition) []string {
		var out []string
		for _, crd := range crds {
			out = append(out, crd.Name)
		}
		return out
	}
	if got, want := names(managed), []string{AppliedManifestWorksCRDName, ClusterClaimsCRDName, KlusterletsCRDName}; !slices.Equal(got, want) {
		t.Errorf("ManagedClusterCRDs() = %v, want %v", got, want)
	}
	if len(hub)+len(managed) != len(all) {
		t.Errorf("hub (%d) + managed (%d) CRDs != all (%d)", len(hub), len(managed), len(all))
	}
	for _, name := range names(hub) {
		if slices.Contains(names(managed), name) {
			t.Errorf("CRD %s is both a hub and a managed-cluster CRD", name)
		}
	}
	for _, name := range []string{
		"managedclusters.cluster.open-cluster-management.io",
		"manifestworks.work.open-cluster-management.io",
		"clustermanagementaddons.addon.open-cluster-management.io",
		"clustermanagers.operator.open-cluster-management.io",
	} {
		if !slices.Contains(names(hub), name) {
			t.Errorf("HubCRDs() lacks %s", name)
		}
	}
}

func TestCRD(t *testing.T) {
	tests := []struct {
		name    string
		wantErr bool
	}{
		{name: "klusterlets.operator.open-cluster-management.io"},
		{name: ClusterClaimsCRDName},
		{name: "nothings.example.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd, err := CRD(tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CRD(%q) error = %v, wantErr %v", tt.name, err, tt.wantErr)
			}
			if err == nil && crd.Name != tt.name {
				t.Errorf("CRD(%q) returned %q", tt.name, crd.Name)
			}
		})
	}
}

// TestSchemeKnowsEveryCRDKind checks that the project's scheme registers the
// Go type of every kind and list kind at every served version, so that typed
// clients can read and write every object the CRDs define.
func TestSchemeKnowsEveryCRDKind(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			for _, kind := range []string{crd.Spec.Names.Kind, crd.Spec.Names.ListKind} {
				gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: kind}
				if !apis.Scheme.Recognizes(gvk) {
					t.Errorf("apis.Scheme does not recognize %s", gvk)
				}
			}
		}
	}
}
