package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/secretdata"
)

// withheldHint ends each value of a Secret the server withholds.
const withheldHint = "kubectl ocm mcp --show-secret-data returns Secrets' data"

// GetInput names one object on a cluster.
type GetInput struct {
	Cluster   string `json:"cluster" jsonschema:"the managed cluster, reached through the hub with the caller's identity"`
	Resource  string `json:"resource" jsonschema:"the resource as kubectl names it: pods, deployments.apps, deploy, cm"`
	Namespace string `json:"namespace,omitempty" jsonschema:"the object's namespace; empty for a cluster-scoped resource"`
	Name      string `json:"name"`
}

// GetOutput is one object of a cluster.
type GetOutput struct {
	Cluster string         `json:"cluster"`
	Object  map[string]any `json:"object" jsonschema:"the object as the cluster's API server returns it, without metadata.managedFields"`
	Note    string         `json:"note,omitempty" jsonschema:"what was left out"`
}

// clusterGet gets one object of a cluster.
func (s *server) clusterGet(ctx context.Context, req *mcp.CallToolRequest, in GetInput) (*mcp.CallToolResult, GetOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := GetOutput{Cluster: in.Cluster}
	if in.Name == "" {
		return nil, out, errors.New("name is empty: name the object (cluster_list lists them)")
	}
	cfg, err := s.clusterConfig(ctx, req, in.Cluster)
	if err != nil {
		return nil, out, err
	}
	m, err := mapping(ctx, cfg, in.Cluster, in.Resource)
	if err != nil {
		return nil, out, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, out, err
	}
	var ri dynamic.ResourceInterface = dc.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if in.Namespace == "" {
			return nil, out, fmt.Errorf("%s is namespaced: give the namespace of %s", gvrString(m.Resource), in.Name)
		}
		ri = dc.Resource(m.Resource).Namespace(in.Namespace)
	}
	obj, err := ri.Get(ctx, in.Name, metav1.GetOptions{})
	if err != nil {
		return nil, out, clusterError(in.Cluster, fmt.Sprintf("get %s %s", gvrString(m.Resource), objectName(in.Namespace, in.Name)), err)
	}
	obj.SetManagedFields(nil)
	if !s.cfg.SecretData {
		secretdata.Withhold(withheldHint, obj)
	}
	out.Object = obj.Object
	for _, field := range [][]string{{"metadata", "annotations"}, {"status"}, {"spec"}, {"data"}} {
		if jsonSize(out)+256 <= s.cfg.MaxBytes {
			break
		}
		unstructured.RemoveNestedField(obj.Object, field...)
		out.Note = joinNotes(out.Note, strings.Join(field, ".")+" left out to fit "+fmt.Sprint(s.cfg.MaxBytes)+" bytes")
	}
	return nil, out, nil
}
