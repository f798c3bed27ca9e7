package crds_test

import (
	"strings"
)

// manifestWork returns a ManifestWork in namespace cluster1 whose spec is the
// given YAML lines (indented by two spaces).
func manifestWork(name, spec string) string {
	return `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: ` + name + `, namespace: cluster1}
spec:
` + spec
}

// configMapWorkload is a valid workload of one ConfigMap, as spec lines.
const configMapWorkload = `
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}
`

// manifestConfig returns a workload of one ConfigMap and one manifest config
// for it with the given extra fields, as spec lines.
func manifestConfig(fields string) string {
	return configMapWorkload + `
  manifestConfigs:
  - resourceIdentifier: {resource: configmaps, name: cm, namespace: default}
    ` + fields + "\n"
}

// replicaSet returns a ManifestWorkReplicaSet in namespace default with a
// valid template and the given placement reference.
func replicaSet(name, placementRef string) string {
	return `
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: ` + name + `, namespace: default}
spec:
  manifestWorkTemplate:
` + strings.ReplaceAll(configMapWorkload, "\n  ", "\n    ") + `
  placementRefs: [` + placementRef + `]`
}

// workInvalidCases break the rules of the work.open-cluster-management.io APIs.
var workInvalidCases = []invalidCase{
	{
		name: "ManifestWork manifest must set metadata.name",
		obj: manifestWork("no-name", `
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}}`),
		wantField: "spec.workload.manifests[0]", wantMessage: "each manifest must set metadata.name",
	},
	{
		name: "ManifestWork manifest must not use metadata.generateName",
		obj: manifestWork("generate-name", `
  workload:
    manifests:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, generateName: cm-, namespace: default}}`),
		wantField: "spec.workload.manifests[0]", wantMessage: "must not set metadata.generateName",
	},
	{
		name:      "ManifestWork manifests must not be empty",
		obj:       manifestWork("empty", `  workload: {manifests: []}`),
		wantField: "spec.workload", wantMessage: "workload.manifests must not be empty",
	},
	{
		name:      "ManifestWork deleteOption propagationPolicy must be Foreground, Orphan or SelectivelyOrphan",
		obj:       manifestWork("bad-propagation", configMapWorkload+`  deleteOption: {propagationPolicy: Background}`),
		wantField: "spec.deleteOption.propagationPolicy",
	},
	{
		name:        "ManifestWork executor of type ServiceAccount needs serviceAccount",
		obj:         manifestWork("no-service-account", configMapWorkload+`  executor: {subject: {type: ServiceAccount}}`),
		wantField:   "spec.executor.subject.serviceAccount",
		wantMessage: "serviceAccount is required when type is ServiceAccount",
	},
	{
		name:      "ManifestWork executor subject type must be ServiceAccount",
		obj:       manifestWork("bad-executor", configMapWorkload+`  executor: {subject: {type: User}}`),
		wantField: "spec.executor.subject.type",
	},
	{
		name:        "ManifestWork feedback rule of type JSONPaths needs jsonPaths",
		obj:         manifestWork("no-jsonpaths", manifestConfig(`feedbackRules: [{type: JSONPaths}]`)),
		wantField:   "spec.manifestConfigs[0].feedbackRules[0].jsonPaths",
		wantMessage: "jsonPaths is required when type is JSONPaths",
	},
	{
		name:      "ManifestWork feedback rule type must be WellKnownStatus or JSONPaths",
		obj:       manifestWork("bad-feedback", manifestConfig(`feedbackRules: [{type: Everything}]`)),
		wantField: "spec.manifestConfigs[0].feedbackRules[0].type",
	},
	{
		name:      "ManifestWork update strategy type must be known",
		obj:       manifestWork("bad-strategy", manifestConfig(`updateStrategy: {type: Replace}`)),
		wantField: "spec.manifestConfigs[0].updateStrategy.type",
	},
	{
		name: "ManifestWork server-side apply field manager must start with work-agent",
		obj: manifestWork("bad-field-manager", manifestConfig(
			`updateStrategy: {type: ServerSideApply, serverSideApply: {fieldManager: kubectl}}`)),
		wantField: "spec.manifestConfigs[0].updateStrategy.serverSideApply.fieldManager",
	},
	{
		name: "ManifestWork ignoreFields condition must be OnSpokePresent or OnSpokeChange",
		obj: manifestWork("bad-ignore", manifestConfig(
			`updateStrategy: {type: ServerSideApply, serverSideApply: {ignoreFields: [{condition: Always, jsonPaths: [.spec]}]}}`)),
		wantField: "spec.manifestConfigs[0].updateStrategy.serverSideApply.ignoreFields[0].condition",
	},
	{
		name:        "ManifestWork condition rule of type CEL needs a condition",
		obj:         manifestWork("no-condition", manifestConfig(`conditionRules: [{type: CEL, celExpressions: ["true"]}]`)),
		wantField:   "spec.manifestConfigs[0].conditionRules[0].condition",
		wantMessage: "condition is required when type is CEL",
	},
	{
		name:      "ManifestWork condition rule type must be CEL or WellKnownConditions",
		obj:       manifestWork("bad-condition-type", manifestConfig(`conditionRules: [{type: WellKnownCompletions}]`)),
		wantField: "spec.manifestConfigs[0].conditionRules[0].type",
	},
	{
		name:      "ManifestWork feedbackScrapeType must be Poll or Watch",
		obj:       manifestWork("bad-scrape", manifestConfig(`feedbackScrapeType: Push`)),
		wantField: "spec.manifestConfigs[0].feedbackScrapeType",
	},
	{
		name: "ManifestWorkReplicaSet template manifests follow the ManifestWork rules",
		obj: `
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: no-name, namespace: default}
spec:
  manifestWorkTemplate:
    workload:
      manifests:
      - {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}}
  placementRefs: [{name: placement-aws}]`,
		wantField: "spec.manifestWorkTemplate.workload.manifests[0]", wantMessage: "each manifest must set metadata.name",
	},
	{
		name:      "ManifestWorkReplicaSet needs at least one placement",
		obj:       replicaSet("no-placements", ``),
		wantField: "spec.placementRefs",
	},
	{
		name:      "ManifestWorkReplicaSet cascadeDeletionPolicy must be Background or Foreground",
		obj:       replicaSet("bad-cascade", `{name: placement-aws}`) + "\n  cascadeDeletionPolicy: Orphan",
		wantField: "spec.cascadeDeletionPolicy",
	},
	{
		name:      "rollout type must be All, Progressive or ProgressivePerGroup",
		obj:       replicaSet("bad-rollout-type", `{name: p, rolloutStrategy: {type: Canary}}`),
		wantField: "spec.placementRefs[0].rolloutStrategy.type",
	},
	{
		name:      "rollout progressDeadline must be a duration in h, m or s, or None",
		obj:       replicaSet("bad-deadline", `{name: p, rolloutStrategy: {type: All, all: {progressDeadline: "10 minutes"}}}`),
		wantField: "spec.placementRefs[0].rolloutStrategy.all.progressDeadline",
	},
	{
		name:      "rollout minSuccessTime must be a duration",
		obj:       replicaSet("bad-soak", `{name: p, rolloutStrategy: {type: Progressive, progressive: {minSuccessTime: "5 minutes"}}}`),
		wantField: "spec.placementRefs[0].rolloutStrategy.progressive.minSuccessTime",
	},
	{
		name:      "rollout maxConcurrency must be a number or a percentage up to 100%",
		obj:       replicaSet("bad-concurrency", `{name: p, rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: "150%"}}}`),
		wantField: "spec.placementRefs[0].rolloutStrategy.progressive.maxConcurrency",
	},
	{
		name:      "rollout maxFailures must be a number or a percentage up to 100%",
		obj:       replicaSet("bad-failures", `{name: p, rolloutStrategy: {type: ProgressivePerGroup, progressivePerGroup: {maxFailures: many}}}`),
		wantField: "spec.placementRefs[0].rolloutStrategy.progressivePerGroup.maxFailures",
	},
}
