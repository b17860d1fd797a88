{{/*
What the staging commands NOTES prints write, relative to global.storage.mountPath: the model directory
(grpo-models stage --dest), the directory of each train and validation file (grpo-data writes its .partial
file beside the output), and the Hugging Face cache (HF_HOME). Everything else on the volume is mounted
read-only: other models, checkpoints, evaluation results (a data file at the volume root cannot be
written here: keep data in a directory). All come from global.job.
Usage: {{ include "fsx-utils.writablePaths" . | fromYamlArray }}
*/}}
{{- define "fsx-utils.writablePaths" -}}
{{- $job := .Values.global.job -}}
{{- $paths := list "hf-cache" (trimSuffix "/" $job.model.path) -}}
{{- range concat $job.data.trainFiles $job.data.valFiles }}
{{- if ne (dir .) "." }}{{ $paths = append $paths (dir .) }}{{ end -}}
{{- end }}
{{- range uniq $paths | sortAlpha }}
- {{ . | quote }}
{{- end }}
{{- end -}}
