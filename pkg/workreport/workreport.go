// Package workreport reads a ManifestWork's status as a report: the work's
// conditions, its large payload's state if it has one, and, for each
// manifest of its spec, what the cluster's work agent reported of it (its
// conditions, status feedback and drift). `kubectl ocm work status` and
// `work get` print it and `kubectl ocm mcp` returns it.
package workreport

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
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
	// Payload is the state of the work's large payload, when its one
	// manifest is a ManifestPayload.
	Payload *Payload `json:"payload,omitempty"`
	// Manifests report each manifest, in the order of the spec; for a
	// large payload, the manifests of the payload as the agent reported
	// them (none before it staged the payload).
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

// NotReported is the Message of a manifest of the spec that the work agent
// has not reported yet.
const NotReported = "not reported by the work agent yet"

// New collects the state of each manifest of work: the spec's manifests, in
// order, joined by ordinal with what the agent reported, then the entries
// the agent reported that the spec no longer has. The manifests of a large
// payload are in its chunks, not in the spec: they are the agent's reports,
// in order.
func New(work *workv1.ManifestWork) *Report {
	s := &Report{Name: work.Name, Cluster: work.Namespace, Conditions: work.Status.Conditions, Payload: PayloadOf(work)}
	if s.Payload != nil && s.Payload.Chunks > 0 {
		s.Manifests = []ManifestStatus{}
		for _, m := range work.Status.ResourceStatus.Manifests {
			s.Manifests = append(s.Manifests, Manifest(m))
		}
		return s
	}
	reported := map[int32]workv1.ManifestCondition{}
	for _, m := range work.Status.ResourceStatus.Manifests {
		reported[m.ResourceMeta.Ordinal] = m
	}
	for i, raw := range work.Spec.Workload.Manifests {
		spec := ManifestStatus{Ordinal: int32(i)}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw.Raw, &obj.Object); err == nil {
			gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
			spec.Group, spec.Version, spec.Kind = gv.Group, gv.Version, obj.GetKind()
			spec.Namespace, spec.Name = obj.GetNamespace(), obj.GetName()
		}
		r, ok := reported[int32(i)]
		if !ok {
			spec.Message = NotReported
			s.Manifests = append(s.Manifests, spec)
			continue
		}
		delete(reported, int32(i))
		ms := Manifest(r)
		if r.ResourceMeta.Kind == "" {
			// The agent could not tell the object: the spec names it.
			ms.Group, ms.Version, ms.Kind, ms.Namespace, ms.Name = spec.Group, spec.Version, spec.Kind, spec.Namespace, spec.Name
		}
		s.Manifests = append(s.Manifests, ms)
	}
	// Entries the spec no longer has (the agent has not caught up).
	for _, r := range work.Status.ResourceStatus.Manifests {
		if _, ok := reported[r.ResourceMeta.Ordinal]; ok {
			s.Manifests = append(s.Manifests, Manifest(r))
		}
	}
	return s
}

// Manifest is the state of one manifest as its agent reported it in r: the
// object it names (nothing when the agent could not tell its kind), its
// conditions, Applied and Available, feedback, drift and the messages of
// what went wrong.
func Manifest(r workv1.ManifestCondition) ManifestStatus {
	rm := r.ResourceMeta
	ms := ManifestStatus{Ordinal: rm.Ordinal, Resource: rm.Resource, Conditions: r.Conditions,
		Applied: conditionStatus(r.Conditions, workv1.ManifestApplied), Available: conditionStatus(r.Conditions, workv1.ManifestAvailable)}
	if rm.Kind != "" {
		ms.Group, ms.Version, ms.Kind, ms.Namespace, ms.Name = rm.Group, rm.Version, rm.Kind, rm.Namespace, rm.Name
	}
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
	return ms
}

// conditionStatus returns the status of condition typ, "" when absent.
func conditionStatus(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return ""
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
