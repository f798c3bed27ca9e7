package work

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Rollout states of one cluster of a ManifestWorkReplicaSet.
const (
	// StateToApply: the cluster is decided but has no work yet.
	StateToApply = "ToApply"
	// StateProgressing: the work is not yet applied and available at its
	// current generation.
	StateProgressing = "Progressing"
	// StateSucceeded: the work is applied and available at its current generation.
	StateSucceeded = "Succeeded"
	// StateFailed: the work is degraded or could not be applied.
	StateFailed = "Failed"
)

// runReplicaSets lists the ManifestWorkReplicaSets, or shows one with the
// rollout state of each of its clusters.
func (o *GetOptions) runReplicaSets(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	ns := o.Namespace
	if o.AllNamespaces && o.Name == "" {
		ns = ""
	}
	notFound := fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -A`", o.Name, o.Namespace)
	if err := cli.GetOrList(ctx, c, list, &list.Items, ns, o.Name, cli.Lookup{Kind: "ManifestWorkReplicaSet", Host: cfg.Host, NotFound: notFound}); err != nil {
		return err
	}
	empty := "No ManifestWorkReplicaSets found in namespace " + o.Namespace + "."
	if o.AllNamespaces {
		empty = "No ManifestWorkReplicaSets found."
	}
	err = cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet"),
		func() (*metav1.Table, error) { return ReplicaSetsTable(list.Items, time.Now()), nil },
		cli.ListOutput{Empty: empty, WithNamespace: o.AllNamespaces, Named: o.Name != ""})
	// A named replica set's table is followed by the state of each cluster.
	if format := cli.Output(o.PrintFlags); err != nil || o.Name == "" || (format != "" && format != "wide") {
		return err
	}
	states, err := clusterStates(ctx, c, &list.Items[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out)
	if len(states.Rows) == 0 {
		fmt.Fprintln(o.Out, "No cluster is decided yet: see `kubectl ocm placement explain` for each placement.")
		return nil
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(states, o.Out)
}

// ReplicaSetsTable renders ManifestWorkReplicaSets as a kubectl table: NAME,
// PLACEMENTS, TOTAL, APPLIED, AVAILABLE, DEGRADED, ROLLOUT (the reason of
// PlacementRolledOut) and AGE; when a template goes as a large payload, a
// PAYLOAD column before AGE says its size.
func ReplicaSetsTable(items []workv1alpha1.ManifestWorkReplicaSet, now time.Time) *metav1.Table {
	payloads := make([]*workreport.Payload, len(items))
	large := false
	for i := range items {
		payloads[i] = workreport.TemplatePayload(&items[i].Spec.ManifestWorkTemplate)
		large = large || payloads[i] != nil
	}
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Placements", Type: "string"}, {Name: "Total", Type: "integer"},
		{Name: "Applied", Type: "integer"}, {Name: "Available", Type: "integer"}, {Name: "Degraded", Type: "integer"},
		{Name: "Rollout", Type: "string"},
	}}
	if large {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Payload", Type: "string"})
	}
	table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Age", Type: "date"})
	for i := range items {
		s := &items[i]
		var refs []string
		for _, r := range s.Spec.PlacementRefs {
			t := string(r.RolloutStrategy.Type)
			if t == "" {
				t = "All"
			}
			refs = append(refs, r.Name+"("+t+")")
		}
		rollout := ""
		if c := meta.FindStatusCondition(s.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); c != nil {
			rollout = c.Reason
		}
		sum := s.Status.Summary
		cells := []any{s.Name, strings.Join(refs, ","), int64(sum.Total), int64(sum.Applied), int64(sum.Available), int64(sum.Degraded), rollout}
		if large {
			summary := ""
			if payloads[i] != nil {
				summary = payloads[i].Summary()
			}
			cells = append(cells, summary)
		}
		cells = append(cells, duration.HumanDuration(now.Sub(s.CreationTimestamp.Time)))
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: s}})
	}
	return table
}

// clusterStates reads the works of mwrs and the decisions of its placements
// and renders the rollout state per cluster.
func clusterStates(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) (*metav1.Table, error) {
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels(workv1alpha1.OwnerLabels(mwrs.Namespace, mwrs.Name))); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	works.Items = slices.DeleteFunc(works.Items, func(w workv1.ManifestWork) bool { return !workv1alpha1.Owns(mwrs.Namespace, mwrs.Name, &w) })
	decided := map[string]string{}
	for _, ref := range mwrs.Spec.PlacementRefs {
		pds := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, pds, client.InNamespace(mwrs.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name}); err != nil {
			return nil, fmt.Errorf("list the decisions of placement %s/%s: %w", mwrs.Namespace, ref.Name, err)
		}
		for _, pd := range pds.Items {
			for _, d := range pd.Status.Decisions {
				if d.ClusterName != "" {
					decided[d.ClusterName] = ref.Name
				}
			}
		}
	}
	revisions, err := setstate.RevisionNumbers(ctx, c, mwrs)
	if err != nil {
		return nil, err
	}
	return ClusterStatesTable(works.Items, decided, revisions), nil
}

// ClusterStatesTable renders the rollout state per cluster: CLUSTER,
// PLACEMENT, REVISION, APPLIED, AVAILABLE, STATE and MESSAGE. decided maps
// each decided cluster to its placement; a decided cluster without a work is
// ToApply. revisions maps revision hashes to their numbers (the revision of
// a work whose hash is not kept shows empty).
func ClusterStatesTable(works []workv1.ManifestWork, decided map[string]string, revisions map[string]int64) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string"}, {Name: "Placement", Type: "string"}, {Name: "Revision", Type: "string"}, {Name: "Applied", Type: "string"},
		{Name: "Available", Type: "string"}, {Name: "State", Type: "string"}, {Name: "Message", Type: "string"},
	}}
	type row struct{ cluster, placement, revision, applied, available, state, message string }
	var rows []row
	seen := map[string]bool{}
	for i := range works {
		w := &works[i]
		seen[w.Namespace] = true
		state, message := workState(w)
		placement := w.Labels[workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey]
		if placement == "" {
			placement = decided[w.Namespace]
		}
		rev := ""
		if n, ok := revisions[w.Annotations[revision.HashAnnotation]]; ok {
			rev = strconv.FormatInt(n, 10)
		}
		rows = append(rows, row{w.Namespace, placement, rev, conditionStatus(w.Status.Conditions, workv1.WorkApplied),
			conditionStatus(w.Status.Conditions, workv1.WorkAvailable), state, message})
	}
	for cluster, placement := range decided {
		if !seen[cluster] {
			rows = append(rows, row{cluster, placement, "", "", "", StateToApply, "decided, the work is not created yet"})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.cluster, b.cluster) })
	for _, r := range rows {
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{r.cluster, r.placement, r.revision, r.applied, r.available, r.state, r.message}})
	}
	return table
}

// WorkState is the rollout state of one work of a ManifestWorkReplicaSet and
// the message that explains it: Succeeded when Applied and Available are
// True for its current generation, Failed when it is Degraded or could not be
// applied, else Progressing. A large payload the agent has not staged for
// the current generation is Progressing, with how much of it is present;
// one it refused (a damaged chunk, an invalid payload) is Failed.
func workState(w *workv1.ManifestWork) (string, string) {
	conds := w.Status.Conditions
	applied := meta.FindStatusCondition(conds, workv1.WorkApplied)
	available := meta.FindStatusCondition(conds, workv1.WorkAvailable)
	if d := meta.FindStatusCondition(conds, workv1.WorkDegraded); d != nil && d.Status == metav1.ConditionTrue {
		return StateFailed, d.Message
	}
	if applied != nil && applied.Status == metav1.ConditionFalse && applied.ObservedGeneration == w.Generation {
		return StateFailed, applied.Message
	}
	current := func(c *metav1.Condition) bool {
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
	}
	if p := workreport.PayloadOf(w); p != nil && !current(applied) {
		switch {
		case p.Refused():
			return StateFailed, "payload " + p.Reason + ": " + p.Message
		case p.Staged != string(metav1.ConditionTrue):
			return StateProgressing, "staging the payload: " + p.Summary()
		}
	}
	switch {
	case current(applied) && current(available):
		return StateSucceeded, ""
	case applied == nil:
		return StateProgressing, "waiting for the cluster's work agent to apply the work"
	case !current(applied):
		return StateProgressing, "waiting for the work agent to apply generation " + fmt.Sprint(w.Generation)
	case available != nil && available.Message != "":
		return StateProgressing, available.Message
	}
	return StateProgressing, "applied, waiting for the objects to be available"
}
