package apis

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSchemeRegistersEveryGroupVersion(t *testing.T) {
	tests := []struct {
		gv   schema.GroupVersion
		kind string
	}{
		{gv: schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1"}, kind: "ManagedCluster"},
		{gv: schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1alpha1"}, kind: "ClusterClaim"},
		{gv: schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta1"}, kind: "Placement"},
		{gv: schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta1"}, kind: "ManagedClusterSet"},
		{gv: schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta2"}, kind: "ManagedClusterSetBinding"},
		{gv: schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1"}, kind: "ManifestWork"},
		{gv: schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1alpha1"}, kind: "ManifestWorkReplicaSet"},
		{gv: schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1alpha1"}, kind: "ClusterManagementAddOn"},
		{gv: schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1beta1"}, kind: "ManagedClusterAddOn"},
		{gv: schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1beta1"}, kind: "AddOnTemplate"},
		{gv: schema.GroupVersion{Group: "operator.open-cluster-management.io", Version: "v1"}, kind: "Klusterlet"},
		{gv: schema.GroupVersion{Group: "multicluster.x-k8s.io", Version: "v1alpha1"}, kind: "ClusterProfile"},
		{gv: schema.GroupVersion{Group: "multicluster.x-k8s.io", Version: "v1alpha1"}, kind: "PlacementDecision"},
		{gv: schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta2"}, kind: "Cluster"},
		{gv: schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, kind: "CustomResourceDefinition"},
		{gv: schema.GroupVersion{Group: "", Version: "v1"}, kind: "Namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.gv.WithKind(tt.kind).String(), func(t *testing.T) {
			if !Scheme.IsVersionRegistered(tt.gv) {
				t.Errorf("group version %s is not registered", tt.gv)
			}
			if !Scheme.Recognizes(tt.gv.WithKind(tt.kind)) {
				t.Errorf("kind %s is not registered", tt.gv.WithKind(tt.kind))
			}
			if !Scheme.Recognizes(tt.gv.WithKind("ListOptions")) && tt.gv.Group != "" {
				t.Errorf("%s lacks the meta/v1 list and watch types", tt.gv)
			}
		})
	}
}
