package crds_test

import "strings"

// addonOperatorInvalidCases break the rules of the addon and operator APIs.
var addonOperatorInvalidCases = []invalidCase{
	{
		name: "ClusterManagementAddOn install strategy type must be Manual or Placements",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: bad-install}
spec: {installStrategy: {type: Auto}}`,
		wantField: "spec.installStrategy.type",
	},
	{
		name: "ClusterManagementAddOn install placement rollout follows the rollout rules",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: bad-rollout}
spec:
  installStrategy:
    type: Placements
    placements:
    - {namespace: default, name: placement-aws, rolloutStrategy: {type: Progressive, progressive: {progressDeadline: soon}}}`,
		wantField: "spec.installStrategy.placements[0].rolloutStrategy.progressive.progressDeadline",
	},
	{
		name: "ManagedClusterAddOn installNamespace must be a DNS-1123 label",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: bad-namespace, namespace: cluster1}
spec: {installNamespace: Bad_Namespace}`,
		wantField: "spec.installNamespace",
	},
	{
		name: "AddOnDeploymentConfig variable name must be an identifier",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: bad-variable, namespace: default}
spec: {customizedVariables: [{name: 1st-var, value: x}]}`,
		wantField: "spec.customizedVariables[0].name",
	},
	{
		name: "AddOnDeploymentConfig variable value is at most 1024 characters",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: long-value, namespace: default}
spec: {customizedVariables: [{name: LOG_LEVEL, value: ` + strings.Repeat("x", 1025) + `}]}`,
		wantField: "spec.customizedVariables[0].value",
	},
	{
		name: "AddOnDeploymentConfig agentInstallNamespace must be a DNS-1123 label",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: bad-agent-namespace, namespace: default}
spec: {agentInstallNamespace: "-agent"}`,
		wantField: "spec.agentInstallNamespace",
	},
	{
		name: "AddOnTemplate agent manifests follow the ManifestWork rules",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: bad-template}
spec:
  addonName: helloworld
  agentSpec:
    workload:
      manifests:
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, generateName: cm-, namespace: default}}`,
		wantField: "spec.agentSpec.workload.manifests[0]",
	},
	{
		name: "AddOnTemplate registration type must be KubeClient or CustomSigner",
		obj: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: bad-registration}
spec:
  addonName: helloworld
  agentSpec:
    workload:
      manifests:
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}
  registration: [{type: Token}]`,
		wantField: "spec.registration[0].type",
	},
	{
		name:    "Klusterlet clusterName is at most 63 characters",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: long-name}
spec: {clusterName: ` + strings.Repeat("c", 64) + `}`,
		wantField: "spec.clusterName",
	},
	{
		// A Klusterlet from Helm or GitOps: the hub would refuse its cluster.
		name:    "Klusterlet clusterName kube-system is reserved",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: kube-system-name}
spec: {clusterName: kube-system}`,
		wantField: "spec.clusterName", wantMessage: "kube-* and open-cluster-management* are reserved",
	},
	{
		name:    "Klusterlet clusterName registration is reserved",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: registration-name}
spec: {clusterName: registration}`,
		wantField: "spec.clusterName", wantMessage: "registration and work are reserved",
	},
	{
		name:    "Klusterlet namespace must start with open-cluster-management-",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: bad-namespace}
spec: {namespace: my-agent}`,
		wantField: "spec.namespace",
	},
	{
		name:    "Klusterlet deploy mode must be known",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: bad-mode}
spec: {deployOption: {mode: Detached}}`,
		wantField: "spec.deployOption.mode",
	},
	{
		name:    "Klusterlet hub connection timeout is at least 180 seconds",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: short-timeout}
spec:
  registrationConfiguration:
    bootstrapKubeConfigs:
      type: LocalSecrets
      localSecretsConfig: {kubeConfigSecrets: [{name: hub1}, {name: hub2}], hubConnectionTimeoutSeconds: 60}`,
		wantField: "spec.registrationConfiguration.bootstrapKubeConfigs.localSecretsConfig.hubConnectionTimeoutSeconds",
	},
	{
		name:    "Klusterlet clientCertExpirationSeconds is 0 or at least an hour",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: short-certificate}
spec: {registrationConfiguration: {clientCertExpirationSeconds: 600}}`,
		wantField:   "spec.registrationConfiguration.clientCertExpirationSeconds",
		wantMessage: "at least 3600",
	},
	{
		// OCM's rule: the agent reports the cluster's own name outside the
		// Hosted modes, so it needs one.
		name:    "Klusterlet reportHostingCluster needs clusterName in Default mode",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: report-without-name}
spec: {deployOption: {mode: Default, reportHostingCluster: Enable}}`,
		wantField: "spec", wantMessage: "spec.clusterName is required when spec.deployOption.reportHostingCluster is Enable",
	},
	{
		name:    "Klusterlet reportHostingCluster needs managementClusterName in Hosted mode",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: klusterlet-report-without-host}
spec: {clusterName: cluster2, deployOption: {mode: Hosted, reportHostingCluster: Enable, hosted: {}}}`,
		wantField: "spec.deployOption", wantMessage: "spec.deployOption.hosted.managementClusterName is required",
	},
	{
		name:    "Klusterlet reportHostingCluster needs managementClusterName in SingletonHosted mode",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: klusterlet-singleton-report-without-host}
spec: {clusterName: cluster2, deployOption: {mode: SingletonHosted, reportHostingCluster: Enable}}`,
		wantField: "spec.deployOption", wantMessage: "spec.deployOption.hosted.managementClusterName is required",
	},
	{
		name:    "Klusterlet reportHostingCluster needs the ClusterClaim feature",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: report-without-claims}
spec:
  clusterName: cluster1
  deployOption: {mode: Default, reportHostingCluster: Enable}
  registrationConfiguration: {featureGates: [{feature: ClusterClaim, mode: Disable}]}`,
		wantField: "spec", wantMessage: "feature gate ClusterClaim cannot be disabled",
	},
	{
		name: "ClusterManager deploy mode must be Default or Hosted",
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: ClusterManager
metadata: {name: bad-mode}
spec: {deployOption: {mode: Singleton}}`,
		wantField: "spec.deployOption.mode",
	},
	{
		name: "ClusterManager registration driver authType must be csr, awsirsa or grpc",
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: ClusterManager
metadata: {name: bad-driver}
spec: {registrationConfiguration: {registrationDrivers: [{authType: token}]}}`,
		wantField: "spec.registrationConfiguration.registrationDrivers[0].authType",
	},
	{
		name: "feature gate mode must be Enable or Disable",
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: ClusterManager
metadata: {name: bad-gate}
spec: {workConfiguration: {featureGates: [{feature: ManifestWorkReplicaSet, mode: Enabled}]}}`,
		wantField: "spec.workConfiguration.featureGates[0].mode",
	},
	{
		name: "ClusterManager leaseDuration must be longer than renewDeadline",
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: ClusterManager
metadata: {name: short-lease}
spec: {leaderElection: {leaseDuration: 10s, renewDeadline: 10s}}`,
		wantField:   "spec.leaderElection",
		wantMessage: "leaseDuration must be longer than renewDeadline",
	},
	{
		name:    "Klusterlet renewDeadline must be longer than 1.2 retry periods",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: short-renew}
spec: {leaderElection: {renewDeadline: 5s, retryPeriod: 4500ms}}`,
		wantField:   "spec.leaderElection",
		wantMessage: "renewDeadline must be longer than 1.2 times retryPeriod",
	},
	{
		name:    "Klusterlet leader election timings are durations",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: bad-duration}
spec: {leaderElection: {leaseDuration: "60"}}`,
		wantField: "spec.leaderElection.leaseDuration",
	},
	{
		name:    "Klusterlet ManifestWork workers are at least 1",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: no-workers}
spec: {workConfiguration: {workers: {manifestWorks: 0}}}`,
		wantField:   "spec.workConfiguration.workers.manifestWorks",
		wantMessage: "workers.manifestWorks must be at least 1",
	},
	{
		name:    "Klusterlet AppliedManifestWork workers are at least 1",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: negative-workers}
spec: {workConfiguration: {workers: {appliedManifestWorkFinalize: -1}}}`,
		wantField:   "spec.workConfiguration.workers.appliedManifestWorkFinalize",
		wantMessage: "must be at least 1",
	},
	{
		name:    "Klusterlet work agent QPS must not be negative",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: negative-qps}
spec: {workConfiguration: {hubKubeAPIQPS: -5}}`,
		wantField:   "spec.workConfiguration.hubKubeAPIQPS",
		wantMessage: "must not be negative",
	},
	{
		name:    "Klusterlet registration burst must not be negative",
		managed: true,
		obj: `
apiVersion: operator.open-cluster-management.io/v1
kind: Klusterlet
metadata: {name: negative-burst}
spec: {registrationConfiguration: {kubeAPIBurst: -1}}`,
		wantField:   "spec.registrationConfiguration.kubeAPIBurst",
		wantMessage: "must not be negative",
	},
}
