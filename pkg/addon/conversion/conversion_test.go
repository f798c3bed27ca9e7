package conversion

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestStorageVersion(t *testing.T) {
	crd := func(stored []string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Versions: versions},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: stored},
		}
	}
	alpha := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1alpha1", Served: true}
	beta := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta1", Served: true, Storage: true}
	tests := []struct {
		name          string
		crd           *apiextensionsv1.CustomResourceDefinition
		wantStorage   string
		wantMigration bool
	}{
		{name: "stored at the storage version", crd: crd([]string{"v1beta1"}, alpha, beta), wantStorage: "v1beta1"},
		{name: "stored at another version too", crd: crd([]string{"v1alpha1", "v1beta1"}, alpha, beta), wantStorage: "v1beta1", wantMigration: true},
		{name: "nothing stored yet", crd: crd(nil, alpha, beta), wantStorage: "v1beta1"},
		{name: "no storage version", crd: crd([]string{"v1alpha1"}, alpha), wantStorage: "", wantMigration: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StorageVersion(tt.crd); got != tt.wantStorage {
				t.Errorf("StorageVersion = %q, want %q", got, tt.wantStorage)
			}
			if got := NeedsMigration(tt.crd); got != tt.wantMigration {
				t.Errorf("NeedsMigration = %v, want %v", got, tt.wantMigration)
			}
		})
	}
}
