{{/*
Seconds the startupProbe allows before it restarts the container.
Usage: {{ include "vllm.startupBudgetSeconds" . }}
*/}}
{{- define "vllm.startupBudgetSeconds" -}}
{{- $p := .Values.startupProbe -}}
{{- add $p.initialDelaySeconds (mul $p.failureThreshold $p.periodSeconds) -}}
{{- end -}}
