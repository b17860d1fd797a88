{{/*
The port each in-release Service listens on. The only place these numbers are written.
Usage: {{ include "grpo-common.port" "sandbox-fusion" }}
*/}}
{{- define "grpo-common.port" -}}
{{- $ports := dict "sandbox-fusion" 8080 "reward-service" 8000 "reward-service-metrics" 9100 "vllm" 8000 "ray-dashboard" 8265 "ray-metrics" 8080 "ray-gcs" 6379 "ray-client" 10001 -}}
{{- required (printf "no port for component %q" .) (get $ports .) -}}
{{- end -}}

{{/*
Fully qualified in-cluster host of a component's Service, always in the release namespace.
Usage: {{ include "grpo-common.serviceHost" (dict "component" "vllm" "context" $) }}
*/}}
{{- define "grpo-common.serviceHost" -}}
{{- printf "%s.%s.svc.cluster.local" (include "grpo-common.fullname" .) (include "grpo-common.namespace" .context) -}}
{{- end -}}

{{/*
URL of a component's Service: http://<release>-<component>.<namespace>.svc.cluster.local:<port><path>.
Usage: {{ include "grpo-common.serviceUrl" (dict "component" "sandbox-fusion" "path" "/run_code" "context" $) }}
*/}}
{{- define "grpo-common.serviceUrl" -}}
{{- printf "http://%s:%v%s" (include "grpo-common.serviceHost" .) (include "grpo-common.port" .component) (.path | default "") -}}
{{- end -}}
