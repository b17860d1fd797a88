{{/*
The namespace every object of the release lives in. There is deliberately no override: a component in
another namespace is exactly the failure the predecessor shipped (sandbox in `default`, URL pointing there).
Usage: namespace: {{ include "grpo-common.namespace" . | quote }}
*/}}
{{- define "grpo-common.namespace" -}}
{{- .Release.Namespace -}}
{{- end -}}

{{/*
Name of a component's objects: <release>-<component>, cut to 63 characters.
Usage: {{ include "grpo-common.fullname" (dict "component" "sandbox-fusion" "context" $) }}
*/}}
{{- define "grpo-common.fullname" -}}
{{- printf "%s-%s" .context.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The RayCluster's name. KubeRay derives "<name>-head-svc" and pod names "<name>-<group>-worker-" (cut at 50),
so it is kept to 40 characters.
Usage: {{ include "grpo-common.rayClusterName" . }}
*/}}
{{- define "grpo-common.rayClusterName" -}}
{{- printf "%s-ray" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/*
The job ConfigMap's name (rendered by the raycluster chart, mounted in the head pod).
Usage: {{ include "grpo-common.jobConfigMapName" . }}
*/}}
{{- define "grpo-common.jobConfigMapName" -}}
{{- include "grpo-common.fullname" (dict "component" "job" "context" .) -}}
{{- end -}}

{{/*
The tools ConfigMap's name: the in-pod submit's package as a zip (`grpo_stack.zip`), made from the checkout by
`python -m grpo_stack.job.toolsmap` (a chart cannot read files outside itself); mounted in the head pod, optional.
Usage: {{ include "grpo-common.toolsConfigMapName" . }}
*/}}
{{- define "grpo-common.toolsConfigMapName" -}}
{{- include "grpo-common.fullname" (dict "component" "tools" "context" .) -}}
{{- end -}}

{{/*
The model name vLLM serves and lm-eval asks for: one name, used by both charts.
Usage: {{ include "grpo-common.servedModelName" . }}
*/}}
{{- define "grpo-common.servedModelName" -}}
{{- printf "%s-eval" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
