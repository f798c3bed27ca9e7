{{/*
kubectl-ocm.image is the ocm-controller image: <registry>/ocm-controller:<tag>,
the tag by default the chart's appVersion.
*/}}
{{- define "kubectl-ocm.image" -}}
{{- printf "%s/ocm-controller:%s" (required "images.registry is required" .Values.images.registry) (.Values.images.tag | default .Chart.AppVersion) -}}
{{- end }}

{{/*
kubectl-ocm.klusterlet.values fills the dict (index . 1) with the fields and
methods of config.AgentValues, from the chart's values (index . 0): the
generated templates execute the manifests of config/agent with it.
*/}}
{{- define "kubectl-ocm.klusterlet.values" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $values := $root.Values -}}
{{- $k := $values.klusterlet -}}
{{- $namespace := required "klusterlet.namespace is required" $k.namespace -}}
{{- $mode := $k.mode | default "Default" -}}
{{- if not (has $mode (list "Default" "Singleton")) -}}
{{- fail (printf "klusterlet.mode %q: this chart installs the agent in mode Default or Singleton; for Hosted mode use kubectl ocm join --mode hosted" $mode) -}}
{{- end -}}
{{- $urls := list -}}
{{- range $k.externalServerURLs -}}
{{- $urls = append $urls (required "each of klusterlet.externalServerURLs needs a url" .url) -}}
{{- end -}}
{{- $reg := $k.registrationConfiguration | default dict -}}
{{- $driver := $reg.addOnKubeClientRegistrationDriver | default dict -}}
{{- $regDriver := $reg.registrationDriver | default dict -}}
{{- $token := $driver.token | default dict -}}
{{- $work := $k.workConfiguration | default dict -}}
{{- $_ := set $v "ClusterName" (required "klusterlet.clusterName is required" $k.clusterName) -}}
{{- $_ := set $v "Image" (include "kubectl-ocm.image" $root) -}}
{{- $_ := set $v "AgentNamespace" $namespace -}}
{{- $_ := set $v "Namespace" $namespace -}}
{{- $_ := set $v "BootstrapKubeconfig" (required "bootstrapHubKubeConfig is required: --set-file bootstrapHubKubeConfig=<kubeconfig>" $values.bootstrapHubKubeConfig) -}}
{{- $_ := set $v "Mode" $mode -}}
{{- $_ := set $v "Hosted" false -}}
{{- $_ := set $v "ExternalServerURLs" $urls -}}
{{- if kindIs "map" $k.networkPolicyConfiguration -}}
{{- $_ := set $v "NetworkPolicy" (dict "MonitoringNamespace" ($k.networkPolicyConfiguration.monitoringNamespace | default "")) -}}
{{- end -}}
{{- $_ := set $v "ClientCertExpirationSeconds" (int64 ($reg.clientCertExpirationSeconds | default 0)) -}}
{{- /* csr is the agent's default: the Klusterlet records only a change, as join's does. */ -}}
{{- $regAuth := $regDriver.authType | default "" -}}
{{- if eq $regAuth "csr" }}{{ $regAuth = "" }}{{ end -}}
{{- $addonAuth := $driver.authType | default "" -}}
{{- if eq $addonAuth "csr" }}{{ $addonAuth = "" }}{{ end -}}
{{- $_ := set $v "RegistrationAuth" $regAuth -}}
{{- $_ := set $v "AddonKubeClientRegistrationAuth" $addonAuth -}}
{{- $_ := set $v "AddonTokenExpirationSeconds" (int64 ($token.expirationSeconds | default 0)) -}}
{{- $_ := set $v "HubKubeAPIQPS" (int64 ($work.hubKubeAPIQPS | default 0)) -}}
{{- $_ := set $v "HubKubeAPIBurst" (int64 ($work.hubKubeAPIBurst | default 0)) -}}
{{- $workers := $work.workers | default dict -}}
{{- $_ := set $v "ManifestWorkWorkers" (int64 ($workers.manifestWorks | default 0)) -}}
{{- $_ := set $v "AppliedWorkWorkers" (int64 ($workers.appliedManifestWorkFinalize | default 0)) -}}
{{- /* Leader election timings are set with join's flags or on the Klusterlet. */ -}}
{{- $_ := set $v "LeaderElection" (dict "Timings" dict) -}}
{{- $tls := $k.tlsProfile | default dict -}}
{{- if or $tls.minTLSVersion $tls.cipherSuites -}}
{{- $_ := set $v "TLSProfile" (dict "MinTLSVersion" ($tls.minTLSVersion | default "") "CipherSuites" $tls.cipherSuites) -}}
{{- end -}}
{{- $_ := set $v "NodeSelector" $values.nodeSelector -}}
{{- $_ := set $v "Tolerations" $values.tolerations -}}
{{- $_ := set $v "Resources" $values.resources -}}
{{- $_ := set $v "PriorityClassName" ($values.priorityClassName | default "") -}}
{{- end }}

{{/*
kubectl-ocm.klusterlet.operator.values fills the dict (index . 1) with the
fields and methods of config.KlusterletOperatorValues, from the chart's values
(index . 0): the generated templates execute the manifests of
config/klusterlet-operator with it. The operator's Pod takes the top-level
values of kubectl-ocm.operatorPod, each one under operator winning.
*/}}
{{- define "kubectl-ocm.klusterlet.operator.values" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $_ := set $v "Image" (include "kubectl-ocm.image" $root) -}}
{{- $_ := set $v "Namespace" "open-cluster-management" -}}
{{- $_ := set $v "LeaderElectionArgs" list -}}
{{- $_ := set $v "EnforceSharedPodSecurity" (($root.Values.podSecurity | default dict).enforceSharedNamespaces | default false) -}}
{{- include "kubectl-ocm.operatorPod" (list $root $v) -}}
{{- end }}
