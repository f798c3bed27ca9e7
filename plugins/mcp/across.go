package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/secretdata"
)

// acrossConcurrency bounds the clusters read at once by across_clusters.
const acrossConcurrency = 8

// maxDiffPaths bounds the differing fields named per cluster.
const maxDiffPaths = 20

// AcrossInput names an object to look for on many clusters.
type AcrossInput struct {
	Resource      string   `json:"resource" jsonschema:"the resource as kubectl names it: deployments, deploy, configmaps, a CRD's plural"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"the object's namespace; empty for a cluster-scoped resource"`
	Name          string   `json:"name"`
	Clusters      []string `json:"clusters,omitempty" jsonschema:"only these clusters; empty: every Available cluster (or of clusterSet, labelSelector)"`
	ClusterSet    string   `json:"clusterSet,omitempty" jsonschema:"only the clusters of this ManagedClusterSet"`
	LabelSelector string   `json:"labelSelector,omitempty" jsonschema:"only the clusters whose labels match"`
}

// AcrossOutput is an object as each cluster has it.
type AcrossOutput struct {
	Resource string            `json:"resource" jsonschema:"the resource, resource.group/version, as the first cluster that answered serves it"`
	Clusters []ObjectOnCluster `json:"clusters"`
	// Groups gather the clusters whose object has the same spec (or data),
	// largest first: one group means every cluster agrees.
	Groups []SpecGroup `json:"groups" jsonschema:"the clusters with the same spec (or data), largest group first"`
	Note   string      `json:"note,omitempty" jsonschema:"what was left out"`
}

// ObjectOnCluster is the object on one cluster.
type ObjectOnCluster struct {
	Cluster string `json:"cluster"`
	Found   bool   `json:"found"`
	// Error says why the cluster could not be read (a 403, no tunnel).
	Error    string   `json:"error,omitempty"`
	Images   []string `json:"images,omitempty" jsonschema:"the images of its Pod template or Pod: the version that runs"`
	Replicas string   `json:"replicas,omitempty" jsonschema:"ready/desired replicas"`
	// SpecHash identifies the object's spec (or data).
	SpecHash string `json:"specHash,omitempty"`
	// Differs names the fields in which the object differs from the largest
	// group's, on a cluster outside it.
	Differs []string `json:"differs,omitempty" jsonschema:"the fields that differ from the largest group's object"`
}

// SpecGroup is the clusters whose object has one spec.
type SpecGroup struct {
	SpecHash string   `json:"specHash"`
	Clusters []string `json:"clusters"`
}

func (s *server) addAcrossTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "across_clusters",
		Title: "One object on every cluster",
		Description: "Look up one object (a Deployment, a ConfigMap, any resource) on every Available managed cluster, or those named or selected, through the hub's tunnel with the caller's identity: on which clusters it exists, the images it runs (its version) and its ready replicas on each, " +
			"the clusters grouped by identical spec (or data), and for each cluster outside the largest group the fields in which it differs. Answers 'where does X run and at what version' and 'which clusters differ from the others'.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(true)},
	}, s.acrossClusters)
}

// acrossClusters reads one object on many clusters.
func (s *server) acrossClusters(ctx context.Context, req *mcp.CallToolRequest, in AcrossInput) (*mcp.CallToolResult, AcrossOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out AcrossOutput
	if in.Resource == "" || in.Name == "" {
		return nil, out, errors.New("resource and name are required")
	}
	clusters, err := s.selectClusters(ctx, req, in)
	if err != nil {
		return nil, out, err
	}
	if len(clusters) == 0 {
		return nil, out, errors.New("no Available cluster matches: fleet_overview lists the clusters and why they are not Available")
	}
	out.Clusters = make([]ObjectOnCluster, len(clusters))
	objs := make([]*unstructured.Unstructured, len(clusters))
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, acrossConcurrency)
	for i, cluster := range clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			on, obj, resource := s.readOn(ctx, req, cluster, in)
			out.Clusters[i], objs[i] = on, obj
			mu.Lock()
			if out.Resource == "" {
				out.Resource = resource
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	// A Secret's values are compared with each other, across the clusters,
	// and only said to be equal or not.
	if !s.cfg.SecretData {
		secretdata.Withhold(withheldHint, objs...)
	}
	specs := make([]any, len(clusters))
	for i, obj := range objs {
		if obj != nil {
			specs[i] = comparable(obj)
			data, _ := json.Marshal(specs[i])
			sum := sha256.Sum256(data)
			out.Clusters[i].SpecHash = hex.EncodeToString(sum[:6])
		}
	}
	out.Groups = specGroups(out.Clusters)
	if len(out.Groups) > 1 {
		var ref any
		for i := range out.Clusters {
			if out.Clusters[i].SpecHash == out.Groups[0].SpecHash {
				ref = specs[i]
				break
			}
		}
		for i := range out.Clusters {
			c := &out.Clusters[i]
			if c.Found && c.SpecHash != out.Groups[0].SpecHash {
				c.Differs = diffPaths("", ref, specs[i], maxDiffPaths)
			}
		}
	}
	var cut string
	out.Clusters, cut = boundItems(out.Clusters, s.cfg.MaxBytes/2, "name fewer clusters, or a clusterSet or labelSelector",
		func(items []ObjectOnCluster) int { return jsonSize(items) })
	out.Note = cut
	return nil, out, nil
}

// selectClusters returns the clusters in names, else the Available ones of
// the selection, sorted.
func (s *server) selectClusters(ctx context.Context, req *mcp.CallToolRequest, in AcrossInput) ([]string, error) {
	if len(in.Clusters) > 0 {
		names := slices.Clone(in.Clusters)
		slices.Sort(names)
		return slices.Compact(names), nil
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, err
	}
	sel := labels.Everything()
	if in.LabelSelector != "" {
		if sel, err = labels.Parse(in.LabelSelector); err != nil {
			return nil, fmt.Errorf("labelSelector %q: %w", in.LabelSelector, err)
		}
	}
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, hubError("list the managed clusters", err)
	}
	var names []string
	for _, mc := range list.Items {
		if in.ClusterSet != "" && mc.Labels[clusterv1beta2.ClusterSetLabel] != in.ClusterSet {
			continue
		}
		if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			names = append(names, mc.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// readOn reads the object of in on cluster: what it says of the object,
// the object (nil when not found), and the resource's name.
func (s *server) readOn(ctx context.Context, req *mcp.CallToolRequest, cluster string, in AcrossInput) (ObjectOnCluster, *unstructured.Unstructured, string) {
	on := ObjectOnCluster{Cluster: cluster}
	cfg, err := s.clusterConfig(ctx, req, cluster)
	if err != nil {
		on.Error = err.Error()
		return on, nil, ""
	}
	m, err := mapping(ctx, cfg, cluster, in.Resource)
	if err != nil {
		on.Error = truncate(err.Error(), maxText)
		return on, nil, ""
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		on.Error = err.Error()
		return on, nil, gvrString(m.Resource)
	}
	var ri dynamic.ResourceInterface = dc.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = dc.Resource(m.Resource).Namespace(in.Namespace)
	}
	obj, err := ri.Get(ctx, in.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return on, nil, gvrString(m.Resource)
	case err != nil:
		on.Error = truncate(clusterError(cluster, "get "+in.Name, err).Error(), maxText)
		return on, nil, gvrString(m.Resource)
	}
	on.Found = true
	on.Images = images(obj)
	on.Replicas = replicas(obj)
	return on, obj, gvrString(m.Resource)
}

// comparable is what across_clusters compares of obj: its spec, else its
// data (a Secret's values as secretdata.Withhold left them), else the
// object without its metadata and status.
func comparable(obj *unstructured.Unstructured) any {
	if spec, ok := obj.Object["spec"]; ok {
		return spec
	}
	for _, field := range []string{"data", "binaryData", "stringData"} {
		if _, ok := obj.Object[field]; ok {
			return map[string]any{"data": obj.Object["data"], "binaryData": obj.Object["binaryData"], "stringData": obj.Object["stringData"]}
		}
	}
	c := obj.DeepCopy().Object
	delete(c, "metadata")
	delete(c, "status")
	return c
}

// images lists the images of obj's Pod template, or of obj as a Pod.
func images(obj *unstructured.Unstructured) []string {
	var out []string
	for _, path := range [][]string{{"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}, {"spec"}} {
		for _, field := range []string{"initContainers", "containers"} {
			list, _, _ := unstructured.NestedSlice(obj.Object, append(slices.Clone(path), field)...)
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					if img, ok := m["image"].(string); ok && !slices.Contains(out, img) {
						out = append(out, img)
					}
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// replicas is "ready/desired" of an object with spec.replicas.
func replicas(obj *unstructured.Unstructured) string {
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		return ""
	}
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	return fmt.Sprintf("%d/%d", ready, want)
}

// specGroups groups the clusters that have the object by spec hash,
// largest group first, then by hash.
func specGroups(clusters []ObjectOnCluster) []SpecGroup {
	by := map[string][]string{}
	for _, c := range clusters {
		if c.Found {
			by[c.SpecHash] = append(by[c.SpecHash], c.Cluster)
		}
	}
	out := make([]SpecGroup, 0, len(by))
	for h, names := range by {
		out = append(out, SpecGroup{SpecHash: h, Clusters: names})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Clusters) != len(out[j].Clusters) {
			return len(out[i].Clusters) > len(out[j].Clusters)
		}
		return out[i].SpecHash < out[j].SpecHash
	})
	return out
}

// diffPaths lists the paths (a.b[2].c) at which a and b differ, at most
// max.
func diffPaths(path string, a, b any, max int) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []string
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out = append(out, diffPaths(p, av[k], bv[k], max-len(out))...)
			if len(out) >= max {
				return out[:max]
			}
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		var out []string
		for i := range av {
			out = append(out, diffPaths(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], max-len(out))...)
			if len(out) >= max {
				return out[:max]
			}
		}
		return out
	}
	if path == "" {
		path = "(the whole object)"
	}
	return []string{strings.TrimPrefix(path, ".")}
}
