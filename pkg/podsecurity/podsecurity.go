// Package podsecurity holds the Pod Security Standard of the product: the
// Pod Security Admission labels of the namespaces the product creates, and
// the check of a Pod template against level restricted with the API
// server's own policy evaluator (k8s.io/pod-security-admission), so that the
// manifests, the operators, the hub's add-on manager and the tests agree
// with the managed cluster's admission.
//
// A namespace where only the product runs Pods enforces restricted (Labels).
// A namespace the product shares with what OCM documents installing there
// (Shared: open-cluster-management on the hub, where OCM's add-on managers
// run, and the add-on agents' namespace open-cluster-management-agent-addon
// on managed clusters) warns and audits at restricted but enforces it only
// when the install's values ask for it (SharedLabels), since most of OCM's
// add-ons do not meet restricted.
package podsecurity

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// The level and version of the Pod Security Standard the product's
// namespaces enforce.
const (
	// Level is the Pod Security Standard level: restricted, the hardened
	// one, which every Pod the product runs meets.
	Level = string(psaapi.LevelRestricted)
	// Version is the version of the standard: latest, the one of the
	// cluster's own Kubernetes release. The product's Pods are checked
	// against the latest version this module's policy library knows, so a
	// release that tightens the standard fails the product's tests before
	// it reaches a cluster; a pinned version would instead keep enforcing
	// an older, looser standard.
	Version = psaapi.VersionLatest
	// EnforceLabel is the namespace label whose value is the level the
	// namespace enforces: pod-security.kubernetes.io/enforce.
	EnforceLabel = psaapi.EnforceLevelLabel
)

// Labels returns the Pod Security Admission labels of a namespace where only
// the product runs Pods: pod-security.kubernetes.io/enforce, audit and warn
// set to Level, each with its -version label set to Version. Each call
// returns a new map.
func Labels() map[string]string {
	return map[string]string{
		psaapi.EnforceLevelLabel: Level, psaapi.EnforceVersionLabel: Version,
		psaapi.AuditLevelLabel: Level, psaapi.AuditVersionLabel: Version,
		psaapi.WarnLevelLabel: Level, psaapi.WarnVersionLabel: Version,
	}
}

// SharedLabels returns the Pod Security Admission labels of a namespace the
// product shares with OCM's add-ons: audit and warn set to Level at Version,
// so that the API server warns of and records each Pod that restricted would
// refuse; and enforce too when enforce is set (the values' podSecurity.
// enforceSharedNamespaces). Each call returns a new map.
func SharedLabels(enforce bool) map[string]string {
	if enforce {
		return Labels()
	}
	return map[string]string{
		psaapi.AuditLevelLabel: Level, psaapi.AuditVersionLabel: Version,
		psaapi.WarnLevelLabel: Level, psaapi.WarnVersionLabel: Version,
	}
}

// SharedEnforceFlag is the operators' flag (ocm-controller operator hub and
// operator klusterlet) that makes the namespaces they share with OCM's
// add-ons enforce restricted too; the install values'
// podSecurity.enforceSharedNamespaces sets it.
const SharedEnforceFlag = "enforce-pod-security-in-shared-namespaces"

// LabelPrefix begins every Pod Security Admission label.
const LabelPrefix = "pod-security.kubernetes.io/"

// HasLabels reports whether labels hold any Pod Security Admission label.
func HasLabels(labels map[string]string) bool {
	return len(LabelsOf(labels)) > 0
}

// LabelsOf returns the Pod Security Admission labels among labels.
func LabelsOf(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, LabelPrefix) {
			out[k] = v
		}
	}
	return out
}

// EnforcedLevel is the level a namespace with these labels enforces: its
// pod-security.kubernetes.io/enforce label, or privileged (Pod Security
// Admission's default) without one.
func EnforcedLevel(labels map[string]string) string {
	if l := labels[EnforceLabel]; l != "" {
		return l
	}
	return string(psaapi.LevelPrivileged)
}

// SetByAnnotation names, on a namespace the product creates, the part of
// the product that sets its Pod Security labels: SetByHub (hub init, the hub
// chart, the ClusterManager operator and the hub controller) or
// SetByKlusterlet (join, the klusterlet chart and the Klusterlet operator).
// Only that part changes them afterwards (Adopt): the product never
// tightens the Pod Security of a namespace it did not create, and the hub
// and the agent of a cluster that is both keep off each other's namespace
// open-cluster-management.
const SetByAnnotation = "kubectl-ocm.io/pod-security-set-by"

// The values of SetByAnnotation.
const (
	SetByHub        = "hub"
	SetByKlusterlet = "klusterlet"
)

// Owns reports whether the part of the product whose namespace desired
// is (its SetByAnnotation) may apply desired over existing, the namespace
// as it is: when it created existing (existing's SetByAnnotation names the
// same part), or when legacy says the product labeled existing before it
// recorded SetByAnnotation. A namespace it does not own is left as it is,
// labels and all: the product never tightens the Pod Security of a
// namespace it did not create, and the hub and the agent of a cluster that
// is both keep off each other's namespace open-cluster-management.
func Owns(existing, desired metav1.Object, legacy bool) bool {
	want := desired.GetAnnotations()[SetByAnnotation]
	have, recorded := existing.GetAnnotations()[SetByAnnotation]
	return want == "" || have == want || (!recorded && legacy)
}

// SetLabelsAs reports whether fieldManager set one of the Pod Security
// labels of obj, as its managed fields record.
func SetLabelsAs(obj metav1.Object, fieldManager string) bool {
	return slices.ContainsFunc(LabelsSetBy(obj, fieldManager), func(k string) bool { return strings.HasPrefix(k, LabelPrefix) })
}

// LabelsSetBy returns the keys of the labels of obj that fieldManager set,
// as its managed fields record.
func LabelsSetBy(obj metav1.Object, fieldManager string) []string {
	var keys []string
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != fieldManager || mf.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels map[string]json.RawMessage `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for k := range fields.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

// AddonNamespaceClaim names the cluster claim the registration agent
// reports from its managed cluster: the level the add-on agents' namespace
// open-cluster-management-agent-addon enforces (EnforcedLevel), which the
// hub cannot read itself. The hub checks the Pod templates of a template
// add-on bound there against restricted only when the claim says the
// namespace enforces it.
const AddonNamespaceClaim = "addonpodsecurity.kubectl-ocm.io"

// WithLabels returns labels with Labels added, replacing their values where
// labels had them; labels itself is not changed.
func WithLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+6)
	maps.Copy(out, labels)
	maps.Copy(out, Labels())
	return out
}

// EnforcesRestricted reports whether a namespace with these labels enforces
// level restricted (its pod-security.kubernetes.io/enforce label), at any
// version.
func EnforcesRestricted(labels map[string]string) bool {
	return labels[EnforceLabel] == Level
}

// evaluator is the API server's policy evaluator with its default checks.
var evaluator = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("pod security policy evaluator: %v", err)) // the library's own checks are valid
	}
	return e
}()

// Failure is one check of the standard that a Pod template fails.
type Failure struct {
	// Reason names the check, as the API server's message does
	// ("allowPrivilegeEscalation != false", "seccompProfile").
	Reason string
	// Detail says which containers or fields fail it and what they must
	// set ("container \"agent\" must set securityContext.seccompProfile.type
	// to \"RuntimeDefault\" or \"Localhost\"").
	Detail string
}

// String is the failure as the API server writes it: reason (detail).
func (f Failure) String() string {
	if f.Detail == "" {
		return f.Reason
	}
	return f.Reason + " (" + f.Detail + ")"
}

// Check evaluates a Pod with this metadata and spec against the standard
// (Level at Version) and returns the checks it fails, in the API server's
// order; none when the Pod would be admitted in a namespace that enforces
// it.
func Check(meta *metav1.ObjectMeta, spec *corev1.PodSpec) []Failure {
	if meta == nil {
		meta = &metav1.ObjectMeta{}
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	agg := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, meta, spec))
	out := make([]Failure, 0, len(agg.ForbiddenReasons))
	for i, reason := range agg.ForbiddenReasons {
		out = append(out, Failure{Reason: reason, Detail: agg.ForbiddenDetails[i]})
	}
	return out
}

// Describe joins failures as the API server's message lists them:
// `violates PodSecurity "restricted:latest": a (detail), b (detail)`.
func Describe(failures []Failure) string {
	parts := make([]string, len(failures))
	for i, f := range failures {
		parts[i] = f.String()
	}
	return fmt.Sprintf("violates PodSecurity %q: %s", Level+":"+Version, strings.Join(parts, ", "))
}

// podTemplatePaths are where the kinds that run Pods hold their Pod
// template, by group and kind.
var podTemplatePaths = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:        {"spec", "template"},
	{Group: "apps", Kind: "DaemonSet"}:         {"spec", "template"},
	{Group: "apps", Kind: "StatefulSet"}:       {"spec", "template"},
	{Group: "apps", Kind: "ReplicaSet"}:        {"spec", "template"},
	{Group: "", Kind: "ReplicationController"}: {"spec", "template"},
	{Group: "", Kind: "PodTemplate"}:           {"template"},
	{Group: "batch", Kind: "Job"}:              {"spec", "template"},
	{Group: "batch", Kind: "CronJob"}:          {"spec", "jobTemplate", "spec", "template"},
}

// PodTemplate returns the Pod template of obj when obj is of a kind that
// runs Pods: a Pod (its metadata and spec), a Deployment, DaemonSet,
// StatefulSet, ReplicaSet, ReplicationController, PodTemplate, Job or
// CronJob; ok is false for any other kind. An error says the template is
// not a valid Pod template.
func PodTemplate(obj *unstructured.Unstructured) (tmpl *corev1.PodTemplateSpec, ok bool, err error) {
	gk := obj.GroupVersionKind().GroupKind()
	tmpl = &corev1.PodTemplateSpec{}
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		pod := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pod); err != nil {
			return nil, true, fmt.Errorf("%s %s is not a valid Pod: %w", gk.Kind, obj.GetName(), err)
		}
		tmpl.ObjectMeta, tmpl.Spec = pod.ObjectMeta, pod.Spec
		return tmpl, true, nil
	}
	path, ok := podTemplatePaths[gk]
	if !ok {
		return nil, false, nil
	}
	m, _, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil {
		return nil, true, fmt.Errorf("%s %s: %s is not an object: %w", gk.Kind, obj.GetName(), strings.Join(path, "."), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, tmpl); err != nil {
		return nil, true, fmt.Errorf("%s %s: %s is not a valid Pod template: %w", gk.Kind, obj.GetName(), strings.Join(path, "."), err)
	}
	return tmpl, true, nil
}
