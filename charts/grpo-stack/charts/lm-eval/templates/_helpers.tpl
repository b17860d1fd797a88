{{/*
Everything that decides what an evaluation measures, as JSON: model (step), tasks, budgets, image. Its hash
names the Job and the run's output directory, so re-running with other tasks or another checkpoint creates a
new Job (helm never patches an immutable Job template) and writes to a new directory. The image is named as its
repository does: a mirror (global.imageRegistry) serves the same image, and the same measurement.
Usage: {{ include "lm-eval.spec" . }}
*/}}
{{- define "lm-eval.spec" -}}
{{- $g := .Values.global -}}
{{- toJson (dict "step" $g.eval.checkpointStep "experiment" $g.job.trainer.experiment "tasks" .Values.tasks "maxPrompt" $g.job.lengths.maxPrompt "maxResponse" $g.job.lengths.maxResponse "image" (include "grpo-common.image" (dict "image" .Values.image "context" (dict "Values" (dict "global" dict)))) "numConcurrent" .Values.numConcurrent "outputSubPath" .Values.outputSubPath) -}}
{{- end -}}

{{- define "lm-eval.specHash" -}}
{{- include "lm-eval.spec" . | sha256sum | trunc 10 -}}
{{- end -}}

{{/*
The run's own results directory, relative to the storage root: <outputSubPath>/<experiment>/<step-N|base>/<hash>.
Usage: {{ include "lm-eval.runDir" . }}
*/}}
{{- define "lm-eval.runDir" -}}
{{- $step := .Values.global.eval.checkpointStep -}}
{{- $label := ternary "base" (printf "step-%d" (int $step)) (kindIs "invalid" $step) -}}
{{- printf "%s/%s/%s/%s" .Values.outputSubPath .Values.global.job.trainer.experiment $label (include "lm-eval.specHash" .) -}}
{{- end -}}
