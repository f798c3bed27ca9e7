// Package explain explains a Placement's decisions as a hub user can read
// them: it reads what the hub's placement scheduler reads, runs the same
// scheduling rules (pkg/placement) and says, for each cluster, why it was or
// was not selected, and whether the written PlacementDecisions agree.
// `kubectl ocm placement explain` prints it and `kubectl ocm mcp` returns it.
package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// Explanation is what `placement explain` reports (its -o json|yaml form).
type Explanation struct {
	// Placement and Namespace name the Placement.
	Placement string `json:"placement"`
	Namespace string `json:"namespace"`
	// Selected are the clusters the scheduling rules select now.
	Selected []string `json:"selected"`
	// Decided are the clusters of the written PlacementDecisions.
	Decided []string `json:"decided"`
	// Agrees reports whether Selected and Decided hold the same clusters.
	Agrees bool `json:"agrees"`
	// Notes explain disagreements and other things worth knowing.
	Notes []string `json:"notes,omitempty"`
	// Satisfied and Misconfigured are the conditions the rules compute.
	Satisfied     metav1.Condition `json:"satisfied"`
	Misconfigured metav1.Condition `json:"misconfigured"`
	// Clusters explains each cluster looked at.
	Clusters []ClusterExplanation `json:"clusters"`
}

// ClusterExplanation says why one cluster was or was not selected.
type ClusterExplanation struct {
	Cluster  string           `json:"cluster"`
	Selected bool             `json:"selected"`
	Stage    string           `json:"stage"`
	Reason   string           `json:"reason"`
	Scores   map[string]int64 `json:"scores,omitempty"`
	Total    int64            `json:"total"`
}

// Read reads what the scheduler reads for Placement namespace/name with c,
// runs the scheduling rules and explains each cluster's fate, with warnings
// for what c may not read.
func Read(ctx context.Context, c client.Client, namespace, name string) (Explanation, []string, error) {
	p, err := Placement(ctx, c, namespace, name)
	if err != nil {
		return Explanation{}, nil, err
	}
	in, decided, warnings, err := readInput(ctx, c, p)
	if err != nil {
		return Explanation{}, nil, err
	}
	return New(p, placement.NewScheduler().Schedule(in), decided), warnings, nil
}

// readInput lists the objects the scheduler reads for p, and the clusters of
// p's written decisions. Objects the user may not read become warnings.
func readInput(ctx context.Context, c client.Client, p *clusterv1beta1.Placement) (placement.Input, []string, []string, error) {
	in := placement.Input{Placement: p, Now: time.Now(), OtherDecisions: map[string]int{}}
	var warnings []string
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return in, nil, nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	for i := range clusters.Items {
		in.Clusters = append(in.Clusters, &clusters.Items[i])
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := c.List(ctx, sets); err != nil {
		return in, nil, nil, fmt.Errorf("list ManagedClusterSets: %w", err)
	}
	for i := range sets.Items {
		in.ClusterSets = append(in.ClusterSets, &sets.Items[i])
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.List(ctx, bindings, client.InNamespace(p.Namespace)); err != nil {
		return in, nil, nil, fmt.Errorf("list the ManagedClusterSetBindings of namespace %s: %w", p.Namespace, err)
	}
	for i := range bindings.Items {
		in.Bindings = append(in.Bindings, &bindings.Items[i])
	}
	scores := &clusterv1alpha1.AddOnPlacementScoreList{}
	if err := c.List(ctx, scores); err != nil {
		warnings = append(warnings, fmt.Sprintf("cannot list AddOnPlacementScores (%v): add-on scores count as 0", err))
	}
	for i := range scores.Items {
		in.Scores = append(in.Scores, &scores.Items[i])
	}
	all := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, all); apierrors.IsForbidden(err) {
		warnings = append(warnings, fmt.Sprintf("cannot list the PlacementDecisions of every namespace (%v): Balance counts only the placements of namespace %s", err, p.Namespace))
		err = c.List(ctx, all, client.InNamespace(p.Namespace))
		if err != nil {
			return in, nil, nil, fmt.Errorf("list the PlacementDecisions of namespace %s: %w", p.Namespace, err)
		}
	} else if err != nil {
		return in, nil, nil, fmt.Errorf("list PlacementDecisions: %w", err)
	}
	others := map[string]map[string]bool{}
	var decided []string
	for _, pd := range all.Items {
		owner := pd.Labels[clusterv1beta1.PlacementLabel]
		mine := pd.Namespace == p.Namespace && owner == p.Name
		for _, d := range pd.Status.Decisions {
			switch {
			case d.ClusterName == "":
			case mine:
				decided = append(decided, d.ClusterName)
			default:
				if others[d.ClusterName] == nil {
					others[d.ClusterName] = map[string]bool{}
				}
				others[d.ClusterName][pd.Namespace+"/"+owner] = true
			}
		}
	}
	for cluster, placements := range others {
		in.OtherDecisions[cluster] = len(placements)
	}
	slices.Sort(decided)
	in.Decided = decided
	return in, decided, warnings, nil
}

// New turns a scheduling result for p into the report, comparing it with
// the clusters of the written decisions.
func New(p *clusterv1beta1.Placement, res placement.Result, decided []string) Explanation {
	report := Explanation{Placement: p.Name, Namespace: p.Namespace, Decided: decided,
		Satisfied: res.Satisfied, Misconfigured: res.Misconfigured, Selected: []string{}}
	if report.Decided == nil {
		report.Decided = []string{}
	}
	for _, g := range res.Groups {
		for _, d := range g.Decisions {
			if d.ClusterName != "" {
				report.Selected = append(report.Selected, d.ClusterName)
			}
		}
	}
	for _, e := range res.Clusters {
		report.Clusters = append(report.Clusters, ClusterExplanation{Cluster: e.Cluster, Selected: e.Selected,
			Stage: string(e.Stage), Reason: e.Reason, Scores: e.Scores, Total: e.Total})
		if e.Selected && !slices.Contains(report.Selected, e.Cluster) {
			report.Selected = append(report.Selected, e.Cluster)
		}
	}
	slices.Sort(report.Selected)
	report.Agrees = slices.Equal(report.Selected, report.Decided)
	if p.Annotations[clusterv1beta1.PlacementDisableAnnotation] == "true" {
		report.Notes = append(report.Notes, fmt.Sprintf("the placement has annotation %s=true: the hub's scheduler skips it and another controller writes its decisions", clusterv1beta1.PlacementDisableAnnotation))
	}
	if !report.Agrees {
		report.Notes = append(report.Notes, fmt.Sprintf("the written decisions (%s) differ from what the scheduling rules select now (%s): the hub's placement scheduler has not caught up yet or is not running (check `kubectl ocm hub status`)",
			orNone(report.Decided), orNone(report.Selected)))
	}
	if len(res.Clusters) == 0 {
		report.Notes = append(report.Notes, "no cluster was looked at: "+res.Satisfied.Message)
	}
	return report
}

// orNone joins names, or says none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// Placement reads Placement ns/name, with an error naming the fix.
func Placement(ctx context.Context, c client.Client, ns, name string) (*clusterv1beta1.Placement, error) {
	p := &clusterv1beta1.Placement{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, NotFound(ns, name)
		}
		return nil, fmt.Errorf("read Placement %s/%s: %w", ns, name, err)
	}
	return p, nil
}

// NotFound is the error of a Placement ns/name that does not exist.
func NotFound(ns, name string) error {
	return fmt.Errorf("placement %s not found in namespace %s: list them with `kubectl ocm placement get -A`, or give the namespace with -n", name, ns)
}
