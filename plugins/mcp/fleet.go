package mcp

import (
	"context"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// maxText bounds one text a cluster reports (a condition's message, a claim).
const maxText = 1 << 10

// FleetInput selects clusters.
type FleetInput struct {
	ClusterSet    string `json:"clusterSet,omitempty" jsonschema:"only the clusters of this ManagedClusterSet (label cluster.open-cluster-management.io/clusterset)"`
	LabelSelector string `json:"labelSelector,omitempty" jsonschema:"only the clusters whose labels match this Kubernetes label selector, such as env=prod"`
}

// FleetOutput is the fleet overview.
type FleetOutput struct {
	Total     int              `json:"total" jsonschema:"clusters selected"`
	Available int              `json:"available" jsonschema:"of them, those whose Available condition is True"`
	Clusters  []ClusterSummary `json:"clusters"`
	Note      string           `json:"note,omitempty" jsonschema:"what was left out, and how to narrow the query"`
}

// ClusterSummary is one cluster of the fleet overview.
type ClusterSummary struct {
	Name                string            `json:"name"`
	Accepted            bool              `json:"accepted" jsonschema:"the hub accepted the cluster (HubAcceptedManagedCluster)"`
	Joined              bool              `json:"joined" jsonschema:"its agent joined (ManagedClusterJoined)"`
	Available           string            `json:"available" jsonschema:"True, False or Unknown (ManagedClusterConditionAvailable)"`
	NotAvailableBecause string            `json:"notAvailableBecause,omitempty" jsonschema:"why the cluster is not Available, and the fix"`
	KubernetesVersion   string            `json:"kubernetesVersion,omitempty"`
	ClusterSet          string            `json:"clusterSet,omitempty"`
	Labels              map[string]string `json:"labels,omitempty"`
	Claims              map[string]string `json:"claims,omitempty" jsonschema:"the ClusterClaims the cluster reports"`
	AddOns              []AddOnSummary    `json:"addOns,omitempty"`
}

// AddOnSummary is one add-on of a cluster.
type AddOnSummary struct {
	Name      string `json:"name"`
	Available string `json:"available" jsonschema:"True, False or Unknown"`
	Message   string `json:"message,omitempty" jsonschema:"the Available condition's message when not True"`
}

// ClusterInput names a cluster.
type ClusterInput struct {
	Cluster string `json:"cluster" jsonschema:"the managed cluster's name"`
}

// ClusterStatus is everything the hub says of one cluster.
type ClusterStatus struct {
	ClusterSummary
	Conditions  []Condition       `json:"conditions,omitempty"`
	Taints      []Taint           `json:"taints,omitempty"`
	Capacity    map[string]string `json:"capacity,omitempty"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
	AddOnStates []AddOnStatus     `json:"addOnStates,omitempty"`
	Namespaces  []string          `json:"managedNamespaces,omitempty" jsonschema:"the namespaces its cluster sets have its agent create"`
}

// Taint is a taint of a cluster.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Condition is a condition as the hub reports it, its message bounded.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// AddOnStatus is one add-on of a cluster with its conditions.
type AddOnStatus struct {
	Name             string      `json:"name"`
	InstallNamespace string      `json:"installNamespace,omitempty"`
	HostingCluster   string      `json:"hostingCluster,omitempty" jsonschema:"in Hosted mode, the cluster its agent runs on"`
	Conditions       []Condition `json:"conditions,omitempty"`
}

func (s *server) addFleetTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "fleet_overview",
		Title:       "Fleet overview",
		Description: "List the managed clusters of the hub with their acceptance, join and availability, why each unavailable one is not Available and the fix, Kubernetes version, cluster set, labels, claims and add-ons with their health. Narrow it with clusterSet or labelSelector.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.fleetOverview)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "cluster_status",
		Title:       "Cluster status",
		Description: "Everything the hub says of one managed cluster: conditions with reasons and messages, why it is not Available, taints, capacity, version, labels, claims, managed namespaces and each add-on's conditions.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr.To(false)},
	}, s.clusterStatus)
}

// fleetOverview lists the selected clusters.
func (s *server) fleetOverview(ctx context.Context, req *mcp.CallToolRequest, in FleetInput) (*mcp.CallToolResult, FleetOutput, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out FleetOutput
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	sel := labels.Everything()
	if in.LabelSelector != "" {
		if sel, err = labels.Parse(in.LabelSelector); err != nil {
			return nil, out, fmt.Errorf("labelSelector %q: %w", in.LabelSelector, err)
		}
	}
	if in.ClusterSet != "" {
		req, err := labels.NewRequirement(clusterv1beta2.ClusterSetLabel, "=", []string{in.ClusterSet})
		if err != nil {
			return nil, out, fmt.Errorf("clusterSet %q: %w", in.ClusterSet, err)
		}
		sel = sel.Add(*req)
	}
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, out, hubError("list the managed clusters", err)
	}
	addons, addonErr := listAddOns(ctx, c)
	for i := range list.Items {
		mc := &list.Items[i]
		sum := summarize(mc)
		for _, a := range addons[mc.Name] {
			sum.AddOns = append(sum.AddOns, addOnSummary(&a))
		}
		if sum.Available == string(metav1.ConditionTrue) {
			out.Available++
		}
		out.Clusters = append(out.Clusters, sum)
	}
	out.Total = len(out.Clusters)
	var notes []string
	if addonErr != nil {
		notes = append(notes, "add-ons left out: "+addonErr.Error())
	}
	var cut string
	out.Clusters, cut = boundItems(out.Clusters, s.cfg.MaxBytes, "narrow it with clusterSet or labelSelector, or ask cluster_status for one cluster",
		func(items []ClusterSummary) int { o := out; o.Clusters = items; return jsonSize(o) + 256 })
	if cut != "" {
		notes = append(notes, cut)
	}
	out.Note = joinNotes(notes...)
	return nil, out, nil
}

// clusterStatus reports one cluster.
func (s *server) clusterStatus(ctx context.Context, req *mcp.CallToolRequest, in ClusterInput) (*mcp.CallToolResult, ClusterStatus, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out ClusterStatus
	if in.Cluster == "" {
		return nil, out, fmt.Errorf("cluster is empty: name a managed cluster (fleet_overview lists them)")
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, out, err
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: in.Cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, out, fmt.Errorf("%q is not a managed cluster of this hub; fleet_overview lists them", in.Cluster)
		}
		return nil, out, hubError("get ManagedCluster "+in.Cluster, err)
	}
	out.ClusterSummary = summarize(mc)
	out.Conditions = conditions(mc.Status.Conditions)
	for _, t := range mc.Spec.Taints {
		out.Taints = append(out.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	out.Capacity = quantities(mc.Status.Capacity)
	out.Allocatable = quantities(mc.Status.Allocatable)
	for _, ns := range mc.Status.ManagedNamespaces {
		out.Namespaces = append(out.Namespaces, ns.Name)
	}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.List(ctx, mcas, client.InNamespace(mc.Name)); err != nil {
		return nil, out, hubError("list the add-ons of cluster "+mc.Name, err)
	}
	for i := range mcas.Items {
		a := &mcas.Items[i]
		out.AddOns = append(out.AddOns, addOnSummary(a))
		out.AddOnStates = append(out.AddOnStates, AddOnStatus{Name: a.Name, InstallNamespace: a.Status.Namespace,
			HostingCluster: a.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey], Conditions: conditions(a.Status.Conditions)})
	}
	return nil, out, nil
}

// listAddOns lists every add-on of the hub by cluster, sorted by name.
func listAddOns(ctx context.Context, c client.Client) (map[string][]addonv1alpha1.ManagedClusterAddOn, error) {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.List(ctx, list); err != nil {
		return nil, hubError("list the add-ons", err)
	}
	out := map[string][]addonv1alpha1.ManagedClusterAddOn{}
	for _, a := range list.Items {
		out[a.Namespace] = append(out[a.Namespace], a)
	}
	for _, as := range out {
		sort.Slice(as, func(i, j int) bool { return as[i].Name < as[j].Name })
	}
	return out, nil
}

// summarize returns the summary of mc.
func summarize(mc *clusterv1.ManagedCluster) ClusterSummary {
	sum := ClusterSummary{
		Name: mc.Name, Accepted: mc.IsAccepted(), Joined: mc.IsJoined(), Available: string(mc.AvailableStatus()),
		KubernetesVersion: mc.Status.Version.Kubernetes, ClusterSet: mc.Labels[clusterv1beta2.ClusterSetLabel],
		Labels: mc.Labels,
	}
	sum.NotAvailableBecause = notAvailableBecause(mc)
	for _, claim := range mc.Status.ClusterClaims {
		if sum.Claims == nil {
			sum.Claims = map[string]string{}
		}
		sum.Claims[claim.Name] = truncate(claim.Value, maxText)
	}
	return sum
}

// notAvailableBecause says why mc is not Available, and the fix; empty
// when it is.
func notAvailableBecause(mc *clusterv1.ManagedCluster) string {
	available := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	switch {
	case available != nil && available.Status == metav1.ConditionTrue:
		return ""
	case !mc.Spec.HubAcceptsClient:
		return "the hub has not accepted it (spec.hubAcceptsClient is false): a hub administrator runs `kubectl ocm accept --clusters " + mc.Name + "`"
	case !mc.IsAccepted():
		return "the hub has not acted on its acceptance yet (no HubAcceptedManagedCluster condition True)"
	case !mc.IsJoined():
		return "its agent has not joined: check the agent on the cluster (`kubectl ocm get klusterlet` there) and its pending certificate request (`kubectl ocm accept --clusters " + mc.Name + "`)"
	case available == nil:
		return "its agent has not reported availability yet"
	}
	msg := available.Reason
	if available.Message != "" {
		msg += ": " + truncate(available.Message, maxText)
	}
	return msg
}

// addOnSummary returns the summary of add-on a.
func addOnSummary(a *addonv1alpha1.ManagedClusterAddOn) AddOnSummary {
	sum := AddOnSummary{Name: a.Name, Available: string(metav1.ConditionUnknown)}
	if c := meta.FindStatusCondition(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable); c != nil {
		sum.Available = string(c.Status)
		if c.Status != metav1.ConditionTrue {
			sum.Message = truncate(c.Message, maxText)
		}
	}
	return sum
}

// conditions returns conds with bounded messages.
func conditions(conds []metav1.Condition) []Condition {
	out := make([]Condition, 0, len(conds))
	for _, c := range conds {
		cond := Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: truncate(c.Message, maxText)}
		if !c.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = c.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, cond)
	}
	return out
}

// quantities renders a resource list.
func quantities(l clusterv1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}
