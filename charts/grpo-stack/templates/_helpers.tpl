{{/*
The umbrella renders one object of its own, the release's default-deny NetworkPolicy (templates/networkpolicy.yaml);
every helper it needs comes from the grpo-common library.
*/}}

{{/*
The release-level values the in-pod job gate checks beside the job (GRPO550 reward routing), at their values key
paths: the components, reward-service.routes and the datasets fsx-utils prepares (fsx-utils.data.train / val).
Only strings, booleans and lists of strings: it travels through JSON intact.
Usage: {{ include "grpo-stack.jobReleaseValues" . | fromJson }}
*/}}
{{- define "grpo-stack.jobReleaseValues" -}}
{{- $facts := dict "global" (dict "components" .Values.global.components) -}}
{{- with index .Values "reward-service" -}}
{{- $_ := set $facts "reward-service" (dict "routes" .routes) -}}
{{- end -}}
{{- with index .Values "fsx-utils" -}}
{{- with .data -}}
{{- $_ := set $facts "fsx-utils" (dict "data" (dict "train" .train "val" .val)) -}}
{{- end -}}
{{- end -}}
{{- toJson $facts -}}
{{- end -}}
