package template

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// identifier returns the resource identifier of obj, its resource guessed
// from its kind as the work agent's RESTMapper would name it for the
// built-in kinds (deployments, jobs, pods, ...).
func identifier(obj *unstructured.Unstructured) workv1.ResourceIdentifier {
	gvr, _ := meta.UnsafeGuessKindToResource(obj.GroupVersionKind())
	return workv1.ResourceIdentifier{Group: gvr.Group, Resource: gvr.Resource, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// isKind reports whether obj is of kind in API group.
func isKind(obj *unstructured.Unstructured, group, kind string) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == group && gvk.Kind == kind
}

// hookIdentifier reports whether obj is a pre-delete hook, as OCM has them:
// a Job or Pod labeled open-cluster-management.io/addon-pre-delete or
// annotated addon.open-cluster-management.io/addon-pre-delete. Other kinds
// so marked are deployed like any manifest.
func hookIdentifier(obj *unstructured.Unstructured) (workv1.ResourceIdentifier, bool) {
	if !isKind(obj, "batch", "Job") && !isKind(obj, "", "Pod") {
		return workv1.ResourceIdentifier{}, false
	}
	_, labeled := obj.GetLabels()[addonv1alpha1.AddonPreDeleteHookLabelKey]
	_, annotated := obj.GetAnnotations()[addonv1alpha1.AddonPreDeleteHookAnnotationKey]
	if !labeled && !annotated {
		return workv1.ResourceIdentifier{}, false
	}
	return identifier(obj), true
}

// deploymentIdentifier reports whether obj is a Deployment, whose
// availability the add-on's health is judged by.
func deploymentIdentifier(obj *unstructured.Unstructured) (workv1.ResourceIdentifier, bool) {
	if !isKind(obj, "apps", "Deployment") {
		return workv1.ResourceIdentifier{}, false
	}
	return identifier(obj), true
}

// wellKnownStatus is the manifest config that asks the work agent for the
// well-known status fields of the object id (ReadyReplicas, Replicas and
// AvailableReplicas of a Deployment; JobComplete of a Job; PodPhase of a Pod).
func wellKnownStatus(id workv1.ResourceIdentifier) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: id,
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		FeedbackScrapeType: workv1.FeedbackPollType, // the API server's default, so that a written work reads back equal
	}
}

// mergeManifestConfigs merges the template's own manifest configs into the
// generated ones, as OCM does: a user config for an object that has a
// generated one adds its feedback rules (one WellKnownStatus rule at most,
// JSON paths not already named) and brings its update strategy, condition
// rules and scrape type; a user config for another object is appended.
func mergeManifestConfigs(generated, user []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	out := make([]workv1.ManifestConfigOption, 0, len(generated)+len(user))
	for _, c := range generated {
		out = append(out, *c.DeepCopy())
	}
	for _, u := range user {
		i := indexOfIdentifier(out, u.ResourceIdentifier)
		if i < 0 {
			out = append(out, *u.DeepCopy())
			continue
		}
		merged := &out[i]
		for _, rule := range u.FeedbackRules {
			merged.FeedbackRules = mergeFeedbackRule(merged.FeedbackRules, rule)
		}
		if u.UpdateStrategy != nil {
			merged.UpdateStrategy = u.UpdateStrategy.DeepCopy()
		}
		for _, r := range u.ConditionRules {
			merged.ConditionRules = append(merged.ConditionRules, *r.DeepCopy())
		}
		if u.FeedbackScrapeType != "" {
			merged.FeedbackScrapeType = u.FeedbackScrapeType
		}
	}
	return out
}

// indexOfIdentifier returns the index of the config of id, or -1.
func indexOfIdentifier(configs []workv1.ManifestConfigOption, id workv1.ResourceIdentifier) int {
	for i := range configs {
		if configs[i].ResourceIdentifier == id {
			return i
		}
	}
	return -1
}

// mergeFeedbackRule adds rule to rules: a WellKnownStatus rule only when
// there is none, the JSON paths of a JSONPaths rule only those whose name is
// not taken yet.
func mergeFeedbackRule(rules []workv1.FeedbackRule, rule workv1.FeedbackRule) []workv1.FeedbackRule {
	names := map[string]bool{}
	wellKnown := false
	for _, r := range rules {
		wellKnown = wellKnown || r.Type == workv1.WellKnownStatusType
		for _, p := range r.JsonPaths {
			names[p.Name] = true
		}
	}
	switch rule.Type {
	case workv1.WellKnownStatusType:
		if !wellKnown {
			rules = append(rules, rule)
		}
	case workv1.JSONPathsType:
		var paths []workv1.JsonPath
		for _, p := range rule.JsonPaths {
			if !names[p.Name] {
				paths = append(paths, p)
			}
		}
		if len(paths) > 0 {
			rules = append(rules, workv1.FeedbackRule{Type: workv1.JSONPathsType, JsonPaths: paths})
		}
	default:
		rules = append(rules, rule)
	}
	return rules
}

// cloneConfigs deep-copies manifest configs.
func cloneConfigs(configs []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	if configs == nil {
		return nil
	}
	out := make([]workv1.ManifestConfigOption, len(configs))
	for i := range configs {
		configs[i].DeepCopyInto(&out[i])
	}
	return out
}
