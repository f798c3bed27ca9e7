{{/*
kubectl-ocm.image is the ocm-controller image: <registry>/ocm-controller:<tag>,
the tag by default the chart's appVersion.
*/}}
{{- define "kubectl-ocm.image" -}}
{{- printf "%s/ocm-controller:%s" (required "images.registry is required" .Values.images.registry) (.Values.images.tag | default .Chart.AppVersion) -}}
{{- end }}

{{/*
kubectl-ocm.hub.values fills the dict (index . 1) with the fields and methods
of config.HubOperatorValues, from the chart's values (index . 0): the
generated templates execute the manifests of config/hub-operator with it.
nodeSelector, tolerations and resources place and size both the operator
(kubectl-ocm.operatorPod) and the hub controller (HubController, the
ClusterManager's spec.nodePlacement and spec.resourceRequirement).
*/}}
{{- define "kubectl-ocm.hub.values" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $values := $root.Values -}}
{{- $url := $values.conversionWebhookURL | default "" -}}
{{- if $url -}}
{{- $u := urlParse $url -}}
{{- if or (ne $u.scheme "https") (not $u.hostname) $u.userinfo $u.query $u.fragment -}}
{{- fail (printf "conversionWebhookURL %q must be https://<host>[:<port>]/<path>, without user information, a query or a fragment" $url) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $v "Image" (include "kubectl-ocm.image" $root) -}}
{{- $_ := set $v "Namespace" "open-cluster-management" -}}
{{- $_ := set $v "ClusterManagerName" "cluster-manager" -}}
{{- $_ := set $v "AutoApproveUsers" $values.clusterManager.registrationConfiguration.autoApproveUsers -}}
{{- $_ := set $v "ConversionWebhookURL" $url -}}
{{- $_ := set $v "EnforceSharedPodSecurity" (($values.podSecurity | default dict).enforceSharedNamespaces | default false) -}}
{{- $np := $values.clusterManager.networkPolicyConfiguration -}}
{{- if kindIs "map" $np -}}
{{- $_ := set $v "NetworkPolicy" (dict "MonitoringNamespace" ($np.monitoringNamespace | default "") "APIServerNamespace" ($np.apiServerNamespace | default "")) -}}
{{- end -}}
{{- $tls := $values.clusterManager.tlsProfile | default dict -}}
{{- if or $tls.minTLSVersion $tls.cipherSuites -}}
{{- $_ := set $v "TLSProfile" (dict "MinTLSVersion" ($tls.minTLSVersion | default "") "CipherSuites" $tls.cipherSuites) -}}
{{- end -}}
{{- $_ := set $v "HubController" (dict "NodeSelector" $values.nodeSelector "Tolerations" $values.tolerations "Resources" $values.resources) -}}
{{- /* Leader election timings are set with hub init's flags or on the ClusterManager. */ -}}
{{- $_ := set $v "HubLeaderElection" (dict "Timings" dict) -}}
{{- $_ := set $v "LeaderElectionArgs" list -}}
{{- include "kubectl-ocm.operatorPod" (list $root $v) -}}
{{- end }}
