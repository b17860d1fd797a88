{{/*
The reward service's deadlines and the pod's termination timing, all derived from one value: the timeout the
trainer's reward client gives one request. Every number below comes from this helper; the Deployment renders it
and grpo-lint (GRPO522) reads the same rendered fields.

Client timeout (seconds):
- verl: images/reward-service/clients/verl_remote_reward.py, GRPO_REWARD_TIMEOUT_S per attempt, which the Ray pods
  get from global.job.reward.timeoutSeconds; absent, the client's DEFAULT_TIMEOUT_S of 120 s (tests/reward pins the
  two together). verl 0.9.1's default reward manager (naive) calls the function through run_in_executor with no
  timeout of its own.
- miles: remote_rm (radixark/miles 31f1ca9, miles/rollout/rm_hub/__init__.py) opens aiohttp.ClientSession() with
  no timeout, so aiohttp's default total of 300 s applies; miles has no flag for it, and does not retry.

Derived:
- deadline: every sample is answered (or refused with 503) within half the client timeout of its arrival, so an
  answer always beats the client's timeout, with room for one more attempt by a client that retries a 503.
- preStop: the pod keeps serving, unchanged, this long after deletion starts, while the Service's endpoints and
  every node's proxy stop sending it new connections: one readiness period (the probe below) plus 5 s.
- grace: preStop + the deadline + 10 s (the drain's quiet second, the last reply, the pool's shutdown). A request
  accepted just before SIGTERM is answered within the deadline, so it is never killed.
preStop + deadline stays below the client timeout (lint GRPO522 refuses values where it does not).
Usage: {{ include "reward-service.timing" . | fromJson }}
*/}}
{{- define "reward-service.timing" -}}
{{- $job := .Values.global.job | default dict -}}
{{- $reward := $job.reward | default dict -}}
{{- $client := 120 -}}
{{- if eq ($job.framework | default "verl") "miles" -}}
{{- $client = 300 -}}
{{- else if $reward.timeoutSeconds -}}
{{- $client = $reward.timeoutSeconds -}}
{{- end -}}
{{- $deadline := div (int $client) 2 -}}
{{- $preStop := add (include "reward-service.readinessPeriodSeconds" .) 5 -}}
{{- dict "clientTimeoutSeconds" (int $client) "deadlineSeconds" $deadline "preStopSeconds" $preStop "graceSeconds" (add $preStop $deadline 10) | toJson -}}
{{- end -}}

{{/*
How often the kubelet probes /ready. Usage: {{ include "reward-service.readinessPeriodSeconds" . }}
*/}}
{{- define "reward-service.readinessPeriodSeconds" -}}10{{- end -}}
