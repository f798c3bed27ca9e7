package hub

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// The discovery documents of the API. It lists only the subresources:
// a resource managedclusters of its own would compete with the ManagedClusters
// of cluster.open-cluster-management.io in kubectl's resource names.

func groupVersion() metav1.GroupVersionForDiscovery {
	return metav1.GroupVersionForDiscovery{GroupVersion: hubtunnel.GroupVersion, Version: hubtunnel.Version}
}

func apiGroup() *metav1.APIGroup {
	return &metav1.APIGroup{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:     hubtunnel.Group, Versions: []metav1.GroupVersionForDiscovery{groupVersion()}, PreferredVersion: groupVersion(),
	}
}

func groupList() *metav1.APIGroupList {
	g := apiGroup()
	g.TypeMeta = metav1.TypeMeta{}
	return &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{*g}}
}

func resourceList() *metav1.APIResourceList {
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: hubtunnel.GroupVersion,
		APIResources: []metav1.APIResource{
			{Name: hubtunnel.Resource + "/" + hubtunnel.ProxySubresource, Kind: "ManagedClusterProxy", Verbs: []string{"get", "create", "update", "patch", "delete"}},
			{Name: hubtunnel.Resource + "/" + hubtunnel.AttachSubresource, Kind: "ManagedClusterTunnel", Verbs: []string{"get"}},
			{Name: hubtunnel.Resource + "/" + hubtunnel.ChunksSubresource, Kind: "ManifestChunk", Verbs: []string{"get"}},
		},
	}
}

// serveOpenAPIV2 answers the aggregator's download of the API's OpenAPI v2
// document: the subresources take no objects, so it has no paths.
func serveOpenAPIV2(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"swagger": "2.0",
		"info":    map[string]string{"title": hubtunnel.Group, "version": hubtunnel.Version},
		"paths":   map[string]any{},
	})
}

// serveOpenAPIV3 answers the aggregator's OpenAPI v3 discovery: no paths.
func serveOpenAPIV3(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"paths": map[string]any{}})
}
