package agent

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/celprogram"
)

// ruleEvaluator evaluates condition rules. CEL programs are compiled once
// per expression and kept; it is safe for concurrent use.
type ruleEvaluator struct {
	env      *cel.Env
	programs *celprogram.Cache
}

// newRuleEvaluator returns an evaluator with the CEL environment of
// condition rules: the variable object (the live object), the variable
// result (the rule's outcome, for messageExpression) and the function
// hasConditions(object), true when object.status.conditions is a non-empty
// list.
func newRuleEvaluator() (*ruleEvaluator, error) {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("result", cel.BoolType),
		cel.Function("hasConditions",
			cel.Overload("hasConditions_dyn", []*cel.Type{cel.DynType}, cel.BoolType,
				cel.UnaryBinding(hasConditions))),
	)
	if err != nil {
		return nil, fmt.Errorf("create the CEL environment of condition rules: %w", err)
	}
	return &ruleEvaluator{env: env, programs: celprogram.NewCache(celprogram.DefaultSize)}, nil
}

// hasConditions is the CEL function hasConditions(object).
func hasConditions(v ref.Val) ref.Val {
	m, ok := v.(traits.Mapper)
	if !ok {
		return types.False
	}
	status, found := m.Find(types.String("status"))
	if !found {
		return types.False
	}
	sm, ok := status.(traits.Mapper)
	if !ok {
		return types.False
	}
	conds, found := sm.Find(types.String("conditions"))
	if !found {
		return types.False
	}
	l, ok := conds.(traits.Lister)
	if !ok {
		return types.False
	}
	return types.Bool(l.Size().(types.Int) > 0)
}

// evaluate computes the condition of one rule on the live object obj.
func (e *ruleEvaluator) evaluate(rule workv1.ConditionRule, obj *unstructured.Unstructured, gen int64) metav1.Condition {
	c := metav1.Condition{Type: rule.Condition, ObservedGeneration: gen}
	if rule.Type == workv1.WellKnownConditionsType && c.Type == "" {
		c.Type = workv1.ManifestComplete
	}
	fail := func(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
		c.Status, c.Reason, c.Message = status, reason, fmt.Sprintf(format, args...)
		return c
	}
	switch {
	case c.Type == "":
		return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid, "the rule names no condition")
	case obj == nil:
		return fail(metav1.ConditionUnknown, workv1.ConditionRuleReasonInternalError, "the object is not available")
	}
	switch rule.Type {
	case workv1.WellKnownConditionsType:
		return wellKnownCondition(c, obj)
	case workv1.CelConditionExpressionsType:
	default:
		return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid, "unknown condition rule type %q", rule.Type)
	}
	if len(rule.CelExpressions) == 0 {
		return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid, "the rule has no celExpressions")
	}
	prgs := make([]cel.Program, 0, len(rule.CelExpressions))
	for _, expr := range append(append([]string(nil), rule.CelExpressions...), rule.MessageExpression) {
		if expr == "" {
			continue
		}
		prg, err := e.programs.Program(e.env, expr)
		if err != nil {
			return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid, "invalid expression %q: %v", expr, err)
		}
		prgs = append(prgs, prg.Program)
	}
	vars := map[string]any{"object": obj.Object}
	result := true
	for i, prg := range prgs[:len(rule.CelExpressions)] {
		out, _, err := prg.Eval(vars)
		if err != nil {
			return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonExpressionError, "expression %q failed: %v", rule.CelExpressions[i], err)
		}
		b, ok := out.Value().(bool)
		if !ok {
			return fail(metav1.ConditionFalse, workv1.ConditionRuleReasonExpressionError, "expression %q returned %s, not a bool", rule.CelExpressions[i], out.Type().TypeName())
		}
		result = result && b
	}
	c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.ConditionRuleReasonEvaluated, rule.Message
	if result {
		c.Status = metav1.ConditionTrue
	}
	if rule.MessageExpression != "" {
		vars["result"] = result
		out, _, err := prgs[len(prgs)-1].Eval(vars)
		if err != nil {
			return fail(c.Status, workv1.ConditionRuleReasonExpressionError, "messageExpression failed: %v", err)
		}
		s, ok := out.Value().(string)
		if !ok {
			return fail(c.Status, workv1.ConditionRuleReasonExpressionError, "messageExpression returned %s, not a string", out.Type().TypeName())
		}
		if s != "" {
			c.Message = s
		}
	}
	return c
}

// wellKnownCondition computes the Complete condition of Jobs (Complete or
// Failed condition True) and Pods (phase Succeeded or Failed).
func wellKnownCondition(c metav1.Condition, obj *unstructured.Unstructured) metav1.Condition {
	gk := obj.GroupVersionKind().GroupKind()
	c.Reason = workv1.ConditionRuleReasonEvaluated
	if c.Type != workv1.ManifestComplete {
		c.Status, c.Reason = metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid
		c.Message = fmt.Sprintf("no well-known condition %s (only %s)", c.Type, workv1.ManifestComplete)
		return c
	}
	switch gk {
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, typ := range []string{"Complete", "Failed"} {
			if conditionTrue(conds, typ) {
				c.Status, c.Message = metav1.ConditionTrue, "Job "+strings.ToLower(typ)
				if typ == "Complete" {
					c.Message = "Job completed"
				}
				return c
			}
		}
		c.Status, c.Message = metav1.ConditionFalse, "Job is not finished"
	case schema.GroupKind{Kind: "Pod"}:
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		if phase == "Succeeded" || phase == "Failed" {
			c.Status, c.Message = metav1.ConditionTrue, "Pod "+strings.ToLower(phase)
			return c
		}
		c.Status, c.Message = metav1.ConditionFalse, "Pod is not finished"
	default:
		c.Status, c.Reason = metav1.ConditionFalse, workv1.ConditionRuleReasonInvalid
		c.Message = fmt.Sprintf("no well-known conditions for %s", gk)
	}
	return c
}

// conditionTrue reports whether the unstructured conditions hold typ=True.
func conditionTrue(conds []any, typ string) bool {
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// builtinManifestConditions are the manifest conditions the agent sets
// itself; every other manifest condition comes from a condition rule.
var builtinManifestConditions = map[string]bool{
	workv1.ManifestApplied: true, workv1.ManifestAvailable: true,
	workv1.ManifestStatusFeedbackSynced: true, workv1.ManifestDrifted: true,
}

// setRuleConditions replaces the rule conditions of a manifest with the
// ones its rules compute on obj.
func (e *ruleEvaluator) setRuleConditions(mc *workv1.ManifestCondition, obj *unstructured.Unstructured, rules []workv1.ConditionRule, gen int64) {
	want := map[string]metav1.Condition{}
	for _, rule := range rules {
		c := e.evaluate(rule, obj, gen)
		if c.Type == "" {
			c.Type = "Invalid"
		}
		want[c.Type] = c
	}
	for i := len(mc.Conditions) - 1; i >= 0; i-- {
		if t := mc.Conditions[i].Type; !builtinManifestConditions[t] {
			if _, keep := want[t]; !keep {
				meta.RemoveStatusCondition(&mc.Conditions, t)
			}
		}
	}
	for _, rule := range rules {
		typ := rule.Condition
		if typ == "" && rule.Type == workv1.WellKnownConditionsType {
			typ = workv1.ManifestComplete
		}
		if c, ok := want[typ]; ok {
			meta.SetStatusCondition(&mc.Conditions, c)
		}
	}
}

// aggregateRuleConditions sets the work-level conditions aggregated from the
// manifests' rule conditions (reason ConditionRulesAggregated), over the
// manifests that carry each type: Progressing is True if any is True, else
// False if any is False, else Unknown; every other type is False if any is
// False, else Unknown if any is Unknown (or none is True), else True.
// Aggregated conditions no manifest carries any more are removed.
func aggregateRuleConditions(work *workv1.ManifestWork) {
	type counts struct{ t, f, u int }
	byType := map[string]*counts{}
	var order []string
	for _, m := range work.Status.ResourceStatus.Manifests {
		for _, c := range m.Conditions {
			if builtinManifestConditions[c.Type] {
				continue
			}
			n := byType[c.Type]
			if n == nil {
				n = &counts{}
				byType[c.Type] = n
				order = append(order, c.Type)
			}
			switch c.Status {
			case metav1.ConditionTrue:
				n.t++
			case metav1.ConditionFalse:
				n.f++
			default:
				n.u++
			}
		}
	}
	for i := len(work.Status.Conditions) - 1; i >= 0; i-- {
		c := work.Status.Conditions[i]
		if _, ok := byType[c.Type]; !ok && c.Reason == workv1.WorkConditionRulesAggregatedReason {
			meta.RemoveStatusCondition(&work.Status.Conditions, c.Type)
		}
	}
	for _, typ := range order {
		n := byType[typ]
		c := metav1.Condition{Type: typ, ObservedGeneration: work.Generation, Reason: workv1.WorkConditionRulesAggregatedReason,
			Message: fmt.Sprintf("%d of %d manifests with a %s rule are True, %d False, %d Unknown", n.t, n.t+n.f+n.u, typ, n.f, n.u)}
		switch {
		case typ == workv1.WorkProgressing && n.t > 0:
			c.Status = metav1.ConditionTrue
		case n.f > 0:
			c.Status = metav1.ConditionFalse
		case n.u > 0 || n.t == 0:
			c.Status = metav1.ConditionUnknown
		default:
			c.Status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&work.Status.Conditions, c)
	}
}
