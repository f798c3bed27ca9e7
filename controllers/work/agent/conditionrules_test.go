package agent

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestEvaluateConditionRule(t *testing.T) {
	e, err := newRuleEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	cel := func(cond string, exprs ...string) workv1.ConditionRule {
		return workv1.ConditionRule{Condition: cond, Type: workv1.CelConditionExpressionsType, CelExpressions: exprs}
	}
	withMessage := func(r workv1.ConditionRule, msg, expr string) workv1.ConditionRule {
		r.Message, r.MessageExpression = msg, expr
		return r
	}
	wellKnown := workv1.ConditionRule{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}
	runningPod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}\n"
	donePod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Succeeded}\n"
	failedPod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Failed}\n"
	failedJob := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nstatus:\n  conditions: [{type: Failed, status: \"True\"}]\n"
	runningJob := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nstatus: {active: 1}\n"
	tests := []struct {
		name        string
		rule        workv1.ConditionRule
		obj         string // empty: the object is missing
		wantType    string
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{name: "CEL true", rule: withMessage(cel("Progressing", "object.status.readyReplicas < object.spec.replicas"), "rolling out", ""),
			obj: testDeployment, wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated, wantMessage: "rolling out"},
		{name: "CEL all expressions must hold", rule: cel("Ready", "object.status.replicas == 3", "object.status.readyReplicas == 3"),
			obj: testDeployment, wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "CEL hasConditions", rule: cel("Reported", "hasConditions(object)"), obj: testJob,
			wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "CEL hasConditions without conditions", rule: cel("Reported", "hasConditions(object)"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "CEL messageExpression", rule: withMessage(cel("Ready", "object.status.readyReplicas == 2"), "static",
			"result ? 'ready: ' + string(object.status.readyReplicas) : 'not ready'"),
			obj: testDeployment, wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated, wantMessage: "ready: 2"},
		{name: "CEL Job complete", rule: cel(workv1.ManifestComplete, `object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")`),
			obj: testJob, wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "CEL syntax error is invalid", rule: cel("Ready", "object.status.(("), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid, wantMessage: "invalid expression"},
		{name: "CEL undeclared variable is invalid", rule: cel("Ready", "obj.status.ready"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
		{name: "CEL invalid messageExpression", rule: withMessage(cel("Ready", "true"), "", "'a' +"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
		{name: "CEL missing field is an expression error", rule: cel("Ready", "object.status.nothing > 1"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonExpressionError, wantMessage: "no such key"},
		{name: "CEL non-bool is an expression error", rule: cel("Ready", "object.status.replicas"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonExpressionError, wantMessage: "not a bool"},
		{name: "CEL without expressions is invalid", rule: cel("Ready"), obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
		{name: "CEL without condition is invalid", rule: cel("", "true"), obj: testDeployment, wantType: "",
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
		{name: "missing object is an internal error", rule: cel("Ready", "true"),
			wantStatus: metav1.ConditionUnknown, wantReason: workv1.ConditionRuleReasonInternalError},
		{name: "well-known Job complete", rule: wellKnown, obj: testJob,
			wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated, wantMessage: "Job completed"},
		{name: "well-known Job failed", rule: wellKnown, obj: failedJob,
			wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated, wantMessage: "Job failed"},
		{name: "well-known Job running", rule: wellKnown, obj: runningJob,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "well-known Pod succeeded", rule: wellKnown, obj: donePod,
			wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "well-known Pod failed", rule: wellKnown, obj: failedPod,
			wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "well-known Pod running", rule: wellKnown, obj: runningPod,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "well-known default condition is Complete", rule: workv1.ConditionRule{Type: workv1.WellKnownConditionsType}, obj: donePod,
			wantType: workv1.ManifestComplete, wantStatus: metav1.ConditionTrue, wantReason: workv1.ConditionRuleReasonEvaluated},
		{name: "well-known other kind is invalid", rule: wellKnown, obj: testDeployment,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
		{name: "well-known other condition is invalid", rule: workv1.ConditionRule{Condition: "Ready", Type: workv1.WellKnownConditionsType}, obj: donePod,
			wantStatus: metav1.ConditionFalse, wantReason: workv1.ConditionRuleReasonInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c metav1.Condition
			if tt.obj == "" {
				c = e.evaluate(tt.rule, nil, 3)
			} else {
				c = e.evaluate(tt.rule, object(t, tt.obj), 3)
			}
			wantType := tt.rule.Condition
			if tt.wantType != "" {
				wantType = tt.wantType
			}
			if c.Type != wantType || c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.ObservedGeneration != 3 {
				t.Errorf("condition = %+v, want %s %s %s", c, wantType, tt.wantStatus, tt.wantReason)
			}
			if !strings.Contains(c.Message, tt.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", c.Message, tt.wantMessage)
			}
		})
	}
}

func TestAggregateRuleConditions(t *testing.T) {
	manifest := func(conds ...metav1.Condition) workv1.ManifestCondition {
		return workv1.ManifestCondition{Conditions: append([]metav1.Condition{
			{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue},
		}, conds...)}
	}
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s}
	}
	const (
		T = metav1.ConditionTrue
		F = metav1.ConditionFalse
		U = metav1.ConditionUnknown
	)
	tests := []struct {
		name      string
		manifests []workv1.ManifestCondition
		want      map[string]metav1.ConditionStatus
	}{
		{name: "no rules, nothing aggregated", manifests: []workv1.ManifestCondition{manifest()}, want: map[string]metav1.ConditionStatus{}},
		{name: "Progressing True if any True", manifests: []workv1.ManifestCondition{
			manifest(cond("Progressing", F)), manifest(cond("Progressing", T)), manifest(cond("Progressing", U)),
		}, want: map[string]metav1.ConditionStatus{"Progressing": T}},
		{name: "Progressing False if none True", manifests: []workv1.ManifestCondition{
			manifest(cond("Progressing", F)), manifest(cond("Progressing", U)),
		}, want: map[string]metav1.ConditionStatus{"Progressing": F}},
		{name: "Progressing Unknown", manifests: []workv1.ManifestCondition{manifest(cond("Progressing", U))},
			want: map[string]metav1.ConditionStatus{"Progressing": U}},
		{name: "Complete only over manifests with the rule", manifests: []workv1.ManifestCondition{
			manifest(cond("Complete", T)), manifest(), manifest(cond("Complete", T)),
		}, want: map[string]metav1.ConditionStatus{"Complete": T}},
		{name: "Complete False if any False", manifests: []workv1.ManifestCondition{
			manifest(cond("Complete", T)), manifest(cond("Complete", F)), manifest(cond("Complete", U)),
		}, want: map[string]metav1.ConditionStatus{"Complete": F}},
		{name: "Degraded Unknown if any Unknown", manifests: []workv1.ManifestCondition{
			manifest(cond("Degraded", T)), manifest(cond("Degraded", U)),
		}, want: map[string]metav1.ConditionStatus{"Degraded": U}},
		{name: "several types", manifests: []workv1.ManifestCondition{
			manifest(cond("Degraded", F), cond("Progressing", T)), manifest(cond("Degraded", F), cond("Custom", T)),
		}, want: map[string]metav1.ConditionStatus{"Degraded": F, "Progressing": T, "Custom": T}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workv1.ManifestWork{}
			w.Generation = 2
			// A stale aggregated condition is removed; other conditions stay.
			w.Status.Conditions = []metav1.Condition{
				{Type: "Stale", Status: T, Reason: workv1.WorkConditionRulesAggregatedReason},
				{Type: workv1.WorkApplied, Status: T, Reason: workv1.WorkAppliedReasonComplete},
			}
			w.Status.ResourceStatus.Manifests = tt.manifests
			aggregateRuleConditions(w)
			if meta.FindStatusCondition(w.Status.Conditions, "Stale") != nil || meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied) == nil {
				t.Errorf("conditions = %+v", w.Status.Conditions)
			}
			if len(w.Status.Conditions) != len(tt.want)+1 {
				t.Errorf("conditions = %+v, want %v", w.Status.Conditions, tt.want)
			}
			for typ, status := range tt.want {
				c := meta.FindStatusCondition(w.Status.Conditions, typ)
				if c == nil || c.Status != status || c.Reason != workv1.WorkConditionRulesAggregatedReason || c.ObservedGeneration != 2 {
					t.Errorf("%s = %+v, want %s", typ, c, status)
				}
			}
		})
	}
}

func TestSetRuleConditions(t *testing.T) {
	e, err := newRuleEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	mc := workv1.ManifestCondition{Conditions: []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue},
		{Type: "Old", Status: metav1.ConditionTrue},
	}}
	rules := []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CelConditionExpressionsType, CelExpressions: []string{"true"}}}
	e.setRuleConditions(&mc, object(t, testDeployment), rules, 1)
	if meta.FindStatusCondition(mc.Conditions, "Old") != nil || !meta.IsStatusConditionTrue(mc.Conditions, "Ready") ||
		meta.FindStatusCondition(mc.Conditions, workv1.ManifestApplied) == nil {
		t.Errorf("conditions = %+v", mc.Conditions)
	}
}
