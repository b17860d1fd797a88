{{/*
An image reference: repository@digest when a digest is set, else repository:tag. With global.imageRegistry set,
that registry replaces the one the repository names (its first segment, when it has a dot or a port or is
localhost) or is put in front of it: `vllm/vllm-openai` -> `<registry>/vllm/vllm-openai`.
Usage: image: {{ include "grpo-common.image" (dict "image" .Values.image "context" $) | quote }}
*/}}
{{- define "grpo-common.image" -}}
{{- $repo := .image.repository -}}
{{- with .context.Values.global.imageRegistry -}}
{{- $parts := splitList "/" $repo -}}
{{- $first := first $parts -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $repo = rest $parts | join "/" -}}
{{- end -}}
{{- $repo = printf "%s/%s" (trimSuffix "/" .) $repo -}}
{{- end -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $repo .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo .image.tag -}}
{{- end -}}
{{- end -}}
