package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// wellKnownStatus are the status fields a WellKnownStatus feedback rule
// reports, by kind, as OCM's work agent names them.
var wellKnownStatus = map[schema.GroupVersionKind][]workv1.JsonPath{
	{Group: "apps", Version: "v1", Kind: "Deployment"}: {
		{Name: "ReadyReplicas", Path: ".status.readyReplicas"},
		{Name: "Replicas", Path: ".status.replicas"},
		{Name: "AvailableReplicas", Path: ".status.availableReplicas"},
	},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: {
		{Name: "NumberReady", Path: ".status.numberReady"},
		{Name: "DesiredNumberScheduled", Path: ".status.desiredNumberScheduled"},
		{Name: "NumberAvailable", Path: ".status.numberAvailable"},
	},
	{Group: "batch", Version: "v1", Kind: "Job"}: {
		{Name: "JobComplete", Path: `.status.conditions[?(@.type=="Complete")].status`},
		{Name: "JobSucceeded", Path: ".status.succeeded"},
	},
	{Group: "", Version: "v1", Kind: "Pod"}: {
		{Name: "PodReady", Path: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "PodPhase", Path: ".status.phase"},
	},
}

// Messages of the StatusFeedbackSynced condition.
const (
	msgFeedbackSynced = "Status feedback is synced"
	msgNoFeedback     = "No status feedback value was found"
)

// statusFeedback evaluates the feedback rules on the live object obj. It
// returns the values found (in rule order) and the errors of rules that
// could not be evaluated; a path that selects nothing is not an error.
func statusFeedback(obj *unstructured.Unstructured, rules []workv1.FeedbackRule, maxRaw int) ([]workv1.FeedbackValue, error) {
	var values []workv1.FeedbackValue
	var errs []error
	gvk := obj.GroupVersionKind()
	for _, rule := range rules {
		var paths []workv1.JsonPath
		switch rule.Type {
		case workv1.WellKnownStatusType:
			known, ok := wellKnownStatus[gvk]
			if !ok {
				errs = append(errs, fmt.Errorf("no well-known status for %s", gvk))
				continue
			}
			paths = known
		case workv1.JSONPathsType:
			paths = rule.JsonPaths
		default:
			errs = append(errs, fmt.Errorf("unknown feedback rule type %q", rule.Type))
			continue
		}
		for _, p := range paths {
			if p.Version != "" && p.Version != gvk.Version {
				errs = append(errs, fmt.Errorf("%s: version %s does not match the object's version %s", p.Name, p.Version, gvk.Version))
				continue
			}
			v, err := feedbackValue(obj.Object, p.Path, maxRaw)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
			case v != nil:
				values = append(values, workv1.FeedbackValue{Name: p.Name, Value: *v})
			}
		}
	}
	return values, errors.Join(errs...)
}

// feedbackValue evaluates the JSONPath path ({path} on the whole object,
// missing keys allowed) and converts what it selects: nil when it selects
// nothing, a scalar as Integer, String or Boolean, anything else (or several
// values) as JsonRaw of at most maxRaw bytes.
func feedbackValue(obj map[string]any, path string, maxRaw int) (*workv1.FieldValue, error) {
	jp := jsonpath.New("feedback").AllowMissingKeys(true)
	if err := jp.Parse(fmt.Sprintf("{%s}", path)); err != nil {
		return nil, fmt.Errorf("parse path %q: %w", path, err)
	}
	results, err := jp.FindResults(obj)
	if err != nil {
		return nil, fmt.Errorf("evaluate path %q: %w", path, err)
	}
	var found []any
	for _, r := range results {
		for _, v := range r {
			if v.IsValid() && v.CanInterface() {
				found = append(found, v.Interface())
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return fieldValue(found[0], maxRaw)
	default:
		return rawValue(found, maxRaw)
	}
}

// fieldValue converts one selected value.
func fieldValue(v any, maxRaw int) (*workv1.FieldValue, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return &workv1.FieldValue{Type: workv1.String, String: &x}, nil
	case bool:
		return &workv1.FieldValue{Type: workv1.Boolean, Boolean: &x}, nil
	case int64:
		return &workv1.FieldValue{Type: workv1.Integer, Integer: &x}, nil
	case int:
		i := int64(x)
		return &workv1.FieldValue{Type: workv1.Integer, Integer: &i}, nil
	case int32:
		i := int64(x)
		return &workv1.FieldValue{Type: workv1.Integer, Integer: &i}, nil
	case float64:
		if x == float64(int64(x)) {
			i := int64(x)
			return &workv1.FieldValue{Type: workv1.Integer, Integer: &i}, nil
		}
	}
	if k := reflect.ValueOf(v).Kind(); k == reflect.Map || k == reflect.Slice || k == reflect.Float64 {
		return rawValue(v, maxRaw)
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// rawValue encodes v as a JsonRaw value of at most maxRaw bytes.
func rawValue(v any, maxRaw int) (*workv1.FieldValue, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode value: %w", err)
	}
	if len(data) > maxRaw {
		return nil, fmt.Errorf("value is %d bytes long, more than the limit of %d", len(data), maxRaw)
	}
	s := string(data)
	return &workv1.FieldValue{Type: workv1.JsonRaw, JsonRaw: &s}, nil
}

// setFeedback sets a manifest's status feedback and StatusFeedbackSynced
// condition from its feedback rules and live object. Without rules both are
// removed.
func setFeedback(mc *workv1.ManifestCondition, obj *unstructured.Unstructured, rules []workv1.FeedbackRule, gen int64) {
	if len(rules) == 0 {
		mc.StatusFeedbacks = workv1.StatusFeedbackResult{}
		meta.RemoveStatusCondition(&mc.Conditions, workv1.ManifestStatusFeedbackSynced)
		return
	}
	c := metav1.Condition{Type: workv1.ManifestStatusFeedbackSynced, ObservedGeneration: gen}
	if obj == nil {
		// The object is not there (or could not be read): nothing to report.
		mc.StatusFeedbacks = workv1.StatusFeedbackResult{}
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.StatusFeedbackSyncedReasonNone, msgNoFeedback
		meta.SetStatusCondition(&mc.Conditions, c)
		return
	}
	values, err := statusFeedback(obj, rules, workv1.DefaultMaxJSONRawLength)
	mc.StatusFeedbacks = workv1.StatusFeedbackResult{Values: values}
	switch {
	case err != nil:
		c.Status, c.Reason = metav1.ConditionFalse, workv1.StatusFeedbackSyncedReasonFailed
		c.Message = "Status feedback failed: " + strings.ReplaceAll(err.Error(), "\n", "; ")
	case len(values) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.StatusFeedbackSyncedReasonNone, msgNoFeedback
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, workv1.StatusFeedbackSyncedReasonSynced, msgFeedbackSynced
	}
	meta.SetStatusCondition(&mc.Conditions, c)
}

// pollsFeedback reports whether some manifest config of work has feedback
// rules collected by Poll (feedbackScrapeType Poll, the API default, or
// unset). The agent watches every applied object either way, so both types
// report a status change within milliseconds; Poll adds a read of the work's
// objects every status sync interval, which also catches a status that
// changed without an event reaching the agent.
func pollsFeedback(work *workv1.ManifestWork) bool {
	for i := range work.Spec.ManifestConfigs {
		c := &work.Spec.ManifestConfigs[i]
		if len(c.FeedbackRules) > 0 && c.FeedbackScrapeType != workv1.FeedbackWatchType {
			return true
		}
	}
	return false
}
