package agent

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// fuzzObject is the live object the fuzz targets evaluate against when the
// input is not a JSON object.
const fuzzObject = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a":"b"}},
"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},
"status":{"readyReplicas":2,"replicas":3,"ratio":0.5,"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"False"}]}}`

// fuzzLiveObject decodes data as the live object, falling back to fuzzObject.
func fuzzLiveObject(data []byte) map[string]any {
	obj := map[string]any{}
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		obj = map[string]any{}
		if err := json.Unmarshal([]byte(fuzzObject), &obj); err != nil {
			panic(err)
		}
	}
	return obj
}

// FuzzFeedbackValue evaluates arbitrary JSONPaths of feedback rules on
// arbitrary objects: it never panics, a value has exactly the field its type
// names, and a raw value respects the size limit.
func FuzzFeedbackValue(f *testing.F) {
	for _, p := range []string{".status.readyReplicas", `.status.conditions[?(@.type=="Available")].status`, ".status", ".spec.template.spec.containers[*].image",
		".status.ratio", "..name", ".status.conditions[0:1]", "{.a}", ".metadata.labels.a", "[", `.x[?(@.y=="`, ".status.conditions[-1]", "$"} {
		f.Add(p, []byte(fuzzObject), 64)
	}
	f.Add(".a.b", []byte(`{"a":{"b":[1,{"c":null},true,"s",1.5]}}`), 8)
	f.Fuzz(func(t *testing.T, path string, data []byte, maxRaw int) {
		if maxRaw < 0 || maxRaw > 1<<16 {
			maxRaw = 1024
		}
		v, err := feedbackValue(fuzzLiveObject(data), path, maxRaw)
		if err != nil || v == nil {
			return
		}
		set := 0
		for _, p := range []bool{v.Integer != nil, v.String != nil, v.Boolean != nil, v.JsonRaw != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Fatalf("value of type %s sets %d fields: %+v", v.Type, set, v)
		}
		switch v.Type {
		case workv1.Integer:
			if v.Integer == nil {
				t.Fatalf("Integer value without integer: %+v", v)
			}
		case workv1.String:
			if v.String == nil {
				t.Fatalf("String value without string: %+v", v)
			}
		case workv1.Boolean:
			if v.Boolean == nil {
				t.Fatalf("Boolean value without boolean: %+v", v)
			}
		case workv1.JsonRaw:
			if v.JsonRaw == nil || len(*v.JsonRaw) > maxRaw || !json.Valid([]byte(*v.JsonRaw)) {
				t.Fatalf("raw value invalid or over %d bytes: %+v", maxRaw, v)
			}
		default:
			t.Fatalf("unknown value type %q", v.Type)
		}
	})
}

// FuzzConditionRule compiles and evaluates arbitrary CEL condition rules on
// arbitrary objects: it never panics nor runs unbounded, and the condition
// always names its type, a valid status and a reason.
func FuzzConditionRule(f *testing.F) {
	e, err := newRuleEvaluator()
	if err != nil {
		f.Fatal(err)
	}
	for _, expr := range []string{
		`object.status.readyReplicas == object.spec.replicas`,
		`hasConditions(object) && object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`,
		`object.status.conditions.map(c, c.type).size() > 1`,
		`object.nope.deeper == 1`, `1 +`, `"a"`, `result`, `[1,2,3].all(x, x > 0)`,
		`object.spec.template.spec.containers.all(c, c.image.startsWith("i"))`,
	} {
		f.Add(expr, `result ? "ok" : "not yet"`, []byte(fuzzObject))
	}
	f.Fuzz(func(t *testing.T, expr, message string, data []byte) {
		rule := workv1.ConditionRule{Type: workv1.CelConditionExpressionsType, Condition: "Ready", CelExpressions: []string{expr}, MessageExpression: message}
		c := e.evaluate(rule, &unstructured.Unstructured{Object: fuzzLiveObject(data)}, 3)
		if c.Type != "Ready" || c.Reason == "" || c.ObservedGeneration != 3 {
			t.Fatalf("condition %+v", c)
		}
		switch c.Status {
		case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		default:
			t.Fatalf("condition status %q", c.Status)
		}
		if c.Status == metav1.ConditionTrue && c.Reason != workv1.ConditionRuleReasonEvaluated {
			t.Fatalf("True without evaluating: %+v", c)
		}
	})
}
