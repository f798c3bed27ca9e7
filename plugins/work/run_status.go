package work

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Report is what `work status -o json|yaml` prints: the work-level
// conditions and one entry per manifest.
type Report struct {
	// Name is the ManifestWork.
	Name string `json:"name"`
	// Cluster is the managed cluster (the work's namespace).
	Cluster string `json:"cluster"`
	// Conditions are the work-level conditions.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Manifests report each manifest, in the order of the spec.
	Manifests []ManifestStatus `json:"manifests"`
}

// ManifestStatus is the state of one manifest as its agent reports it.
type ManifestStatus struct {
	// Ordinal is the manifest's index in spec.workload.manifests.
	Ordinal int32 `json:"ordinal"`
	// Group, Version, Kind, Resource, Namespace and Name identify the object.
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Applied and Available are the statuses of those conditions, empty
	// while the agent has not reported them.
	Applied   string `json:"applied,omitempty"`
	Available string `json:"available,omitempty"`
	// Feedback maps each status feedback value's name to its value.
	Feedback map[string]any `json:"feedback,omitempty"`
	// LastDrift is when the agent last found the object changed or deleted
	// on the managed cluster (the Drifted condition's last transition).
	LastDrift *metav1.Time `json:"lastDrift,omitempty"`
	// DriftReason is the reason of the Drifted condition: ResourceModified
	// or ResourceDeleted.
	DriftReason string `json:"driftReason,omitempty"`
	// Message joins the messages of the conditions that are False and of
	// the Drifted condition, which names the drifted fields and whether the
	// agent restored them.
	Message string `json:"message,omitempty"`
	// Conditions are every condition of the manifest.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// standardConditions are shown in their own columns.
var standardConditions = []string{workv1.ManifestApplied, workv1.ManifestAvailable, workv1.ManifestStatusFeedbackSynced, workv1.ManifestDrifted}

// Run prints the state of each manifest of the work.
func (o *StatusOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	cluster := o.Clusters[0]
	work := &workv1.ManifestWork{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, work); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWork %s not found in cluster %s: list the works with `kubectl ocm work get --clusters %s`", o.Name, cluster, cluster)
		}
		return fmt.Errorf("read ManifestWork %s in cluster %s on %s: %w", o.Name, cluster, cfg.Host, err)
	}
	status := NewReport(work)
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, status)
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(StatusTable(status, time.Now()), o.Out)
}

// NewReport collects the state of each manifest of work: the spec's
// manifests, in order, joined by ordinal with what the agent reported.
func NewReport(work *workv1.ManifestWork) *Report {
	s := &Report{Name: work.Name, Cluster: work.Namespace, Conditions: work.Status.Conditions}
	reported := map[int32]workv1.ManifestCondition{}
	for _, m := range work.Status.ResourceStatus.Manifests {
		reported[m.ResourceMeta.Ordinal] = m
	}
	for i, raw := range work.Spec.Workload.Manifests {
		ms := ManifestStatus{Ordinal: int32(i)}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw.Raw, &obj.Object); err == nil {
			gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
			ms.Group, ms.Version, ms.Kind = gv.Group, gv.Version, obj.GetKind()
			ms.Namespace, ms.Name = obj.GetNamespace(), obj.GetName()
		}
		if r, ok := reported[int32(i)]; ok {
			fill(&ms, r)
			delete(reported, int32(i))
		} else {
			ms.Message = "not reported by the work agent yet"
		}
		s.Manifests = append(s.Manifests, ms)
	}
	// Entries the spec no longer has (the agent has not caught up).
	for _, r := range work.Status.ResourceStatus.Manifests {
		if _, ok := reported[r.ResourceMeta.Ordinal]; ok {
			ms := ManifestStatus{Ordinal: r.ResourceMeta.Ordinal}
			fill(&ms, r)
			s.Manifests = append(s.Manifests, ms)
		}
	}
	return s
}

// fill copies what the agent reported for one manifest into ms.
func fill(ms *ManifestStatus, r workv1.ManifestCondition) {
	rm := r.ResourceMeta
	if rm.Kind != "" {
		ms.Group, ms.Version, ms.Kind, ms.Namespace, ms.Name = rm.Group, rm.Version, rm.Kind, rm.Namespace, rm.Name
	}
	ms.Resource = rm.Resource
	ms.Conditions = r.Conditions
	ms.Applied = conditionStatus(r.Conditions, workv1.ManifestApplied)
	ms.Available = conditionStatus(r.Conditions, workv1.ManifestAvailable)
	for _, v := range r.StatusFeedbacks.Values {
		if ms.Feedback == nil {
			ms.Feedback = map[string]any{}
		}
		ms.Feedback[v.Name] = feedbackValue(v.Value)
	}
	var msgs []string
	for _, c := range r.Conditions {
		if c.Type == workv1.ManifestDrifted && c.Status == metav1.ConditionTrue {
			ms.DriftReason = c.Reason
			ms.LastDrift = c.LastTransitionTime.DeepCopy()
		}
		if (c.Status == metav1.ConditionFalse && c.Type != workv1.ManifestDrifted) || (c.Type == workv1.ManifestDrifted && c.Status == metav1.ConditionTrue) {
			if c.Message != "" {
				msgs = append(msgs, c.Type+": "+c.Message)
			} else {
				msgs = append(msgs, c.Type+": "+c.Reason)
			}
		}
	}
	ms.Message = strings.Join(msgs, "; ")
}

// feedbackValue returns the value of a feedback field: int64, string, bool,
// or the raw JSON as a string.
func feedbackValue(v workv1.FieldValue) any {
	switch {
	case v.Integer != nil:
		return *v.Integer
	case v.String != nil:
		return *v.String
	case v.Boolean != nil:
		return *v.Boolean
	case v.JsonRaw != nil:
		return *v.JsonRaw
	}
	return nil
}

// StatusTable renders s as a kubectl table: KIND, NAMESPACE/NAME, APPLIED,
// AVAILABLE, FEEDBACK, LAST DRIFT, MESSAGE, and CONDITIONS (the other
// conditions, such as those of condition rules) when any manifest has one.
func StatusTable(s *Report, now time.Time) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Kind", Type: "string"}, {Name: "Namespace/Name", Type: "string"},
		{Name: "Applied", Type: "string"}, {Name: "Available", Type: "string"},
		{Name: "Feedback", Type: "string"}, {Name: "Last Drift", Type: "string"},
		{Name: "Message", Type: "string"},
	}}
	others := false
	for _, m := range s.Manifests {
		kind := m.Kind
		if m.Group != "" {
			kind += "." + m.Group
		}
		name := m.Name
		if m.Namespace != "" {
			name = m.Namespace + "/" + name
		}
		lastDrift := ""
		if m.LastDrift != nil {
			lastDrift = duration.HumanDuration(now.Sub(m.LastDrift.Time)) + " ago (" + m.DriftReason + ")"
		}
		other := otherConditions(m.Conditions)
		others = others || other != ""
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
			kind, name, m.Applied, m.Available, feedbackString(m.Feedback), lastDrift, m.Message, other,
		}})
	}
	if others {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Conditions", Type: "string"})
	} else {
		for i := range table.Rows {
			table.Rows[i].Cells = table.Rows[i].Cells[:7]
		}
	}
	return table
}

// feedbackString renders feedback as name=value pairs sorted by name.
func feedbackString(feedback map[string]any) string {
	names := make([]string, 0, len(feedback))
	for n := range feedback {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		var v string
		switch x := feedback[n].(type) {
		case int64:
			v = strconv.FormatInt(x, 10)
		default:
			v = fmt.Sprint(x)
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, ", ")
}

// otherConditions renders the conditions without a column of their own as
// Type=Status pairs.
func otherConditions(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		if !slices.Contains(standardConditions, c.Type) {
			parts = append(parts, c.Type+"="+string(c.Status))
		}
	}
	return strings.Join(parts, ",")
}
