{{/*
kubectl-ocm.image is the ocm-controller image: <registry>/ocm-controller:<tag>,
the tag by default the chart's appVersion.
*/}}
{{- define "kubectl-ocm.image" -}}
{{- printf "%s/ocm-controller:%s" (required "images.registry is required" .Values.images.registry) (.Values.images.tag | default .Chart.AppVersion) -}}
{{- end }}

{{/*
kubectl-ocm.hub.values fills the dict (index . 1) with the fields and methods
of config.HubValues, from the chart's values (index . 0): the generated
templates execute the manifests of config/hub with it.
*/}}
{{- define "kubectl-ocm.hub.values" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $values := $root.Values -}}
{{- $hubNamespace := required "hubNamespace is required" $values.hubNamespace -}}
{{- $url := $values.conversionWebhookURL | default "" -}}
{{- $host := "" -}}
{{- $port := "9443" -}}
{{- $bind := ":9443" -}}
{{- if $url -}}
{{- $u := urlParse $url -}}
{{- if or (ne $u.scheme "https") (not $u.hostname) $u.userinfo $u.query $u.fragment -}}
{{- fail (printf "conversionWebhookURL %q must be https://<host>[:<port>]/<path>, without user information, a query or a fragment" $url) -}}
{{- end -}}
{{- $host = $u.hostname -}}
{{- $port = regexFind ":[0-9]+$" $u.host | trimPrefix ":" | default "443" -}}
{{- $bind = printf ":%s" $port -}}
{{- if or (hasPrefix "127." $host) (eq $host "::1") -}}
{{- if contains ":" $host -}}
{{- $bind = printf "[%s]:%s" $host $port -}}
{{- else -}}
{{- $bind = printf "%s:%s" $host $port -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $v "Image" (include "kubectl-ocm.image" $root) -}}
{{- $_ := set $v "HubNamespace" $hubNamespace -}}
{{- $_ := set $v "Namespace" $hubNamespace -}}
{{- $_ := set $v "OperatorNamespace" (required "operatorNamespace is required" $values.operatorNamespace) -}}
{{- $_ := set $v "AutoApproveUsers" $values.clusterManager.registrationConfiguration.autoApproveUsers -}}
{{- $_ := set $v "ConversionWebhookURL" $url -}}
{{- $_ := set $v "WebhookHost" $host -}}
{{- $_ := set $v "WebhookPort" $port -}}
{{- $_ := set $v "WebhookBindAddress" $bind -}}
{{- $_ := set $v "BootstrapServiceAccount" "agent-registration-bootstrap" -}}
{{- $_ := set $v "BootstrapTokenGroup" "system:bootstrappers:managedcluster" -}}
{{- $_ := set $v "ClusterBootstrapUserPrefix" "system:serviceaccount:open-cluster-management:agent-registration-bootstrap-" -}}
{{- $_ := set $v "NodeSelector" $values.nodeSelector -}}
{{- $_ := set $v "Tolerations" $values.tolerations -}}
{{- $_ := set $v "Resources" $values.resources -}}
{{- end }}
