{{/*
Seconds the startupProbe allows before it restarts the container.
Usage: {{ include "vllm.startupBudgetSeconds" . }}
*/}}
{{- define "vllm.startupBudgetSeconds" -}}
{{- $p := .Values.startupProbe -}}
{{- add $p.initialDelaySeconds (mul $p.failureThreshold $p.periodSeconds) -}}
{{- end -}}

{{/*
The served model's directory, relative to the storage root: the merged checkpoint of global.eval.checkpointStep
(where `grpo-eval merge` writes it), or the base model when the step is null. Mounted read-only, alone.
Usage: {{ include "vllm.modelSubPath" . }}
*/}}
{{- define "vllm.modelSubPath" -}}
{{- $step := .Values.global.eval.checkpointStep -}}
{{- if kindIs "invalid" $step -}}
{{- .Values.global.job.model.path -}}
{{- else -}}
{{- printf "%s/global_step_%d/merged" .Values.global.job.trainer.checkpointDir (int $step) -}}
{{- end -}}
{{- end -}}

{{/*
The run a merged model must have come from, as JSON: compared field by field with the `run` section of the
model's grpo-provenance.json (written by `grpo-eval merge`; grpo_stack.eval.provenance.run_identity builds the same
object from a values file, tests/eval/test_eval_phase.py checks they agree).
Usage: {{ include "vllm.runIdentity" . }}
*/}}
{{- define "vllm.runIdentity" -}}
{{- $job := .Values.global.job -}}
{{- $lora := dict -}}
{{- with $job.lora }}{{ $lora = dict "rank" (int .rank) "alpha" (int .alpha) "targetModules" .targetModules }}{{ end -}}
{{- toJson (dict "experiment" $job.trainer.experiment "checkpointDir" $job.trainer.checkpointDir "modelPath" $job.model.path "framework" $job.framework "backend" $job.backend "lora" (ternary $lora nil (not (empty $lora)))) -}}
{{- end -}}
