{{/*
The umbrella renders the objects that need sibling subcharts' values: the release's default-deny NetworkPolicy
(templates/networkpolicy.yaml), the job ConfigMap and, in job mode, the RayJob whose entrypoint names the job
ConfigMap's hash; every other helper comes from the grpo-common library and the raycluster subchart.
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

{{/*
The job spec as the job ConfigMap holds it (job.json); job mode hashes this same text into the RayJob's entrypoint.
Usage: {{ include "grpo-stack.jobJson" . }}
*/}}
{{- define "grpo-stack.jobJson" -}}
{{- include "raycluster.jobSpec" (dict "context" (index .Subcharts "raycluster") "releaseValues" (include "grpo-stack.jobReleaseValues" . | fromJson)) -}}
{{- end -}}
