{{/*
An image reference: repository@digest when a digest is set, else repository:tag.
Usage: image: {{ include "grpo-common.image" .Values.image | quote }}
*/}}
{{- define "grpo-common.image" -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else -}}
{{- printf "%s:%s" .repository .tag -}}
{{- end -}}
{{- end -}}
