{{/*
The UID and GID of every container the chart runs as non-root (images/reward-service creates user 10001).
Usage: {{ include "grpo-common.nonRootId" . }}
*/}}
{{- define "grpo-common.nonRootId" -}}
10001
{{- end -}}

{{/*
Pod-level securityContext: the RuntimeDefault seccomp profile for every pod. With "nonRoot" true the pod also
runs as UID/GID 10001 (grpo-common.nonRootId) and refuses root. No fsGroup: emptyDirs are world-writable
already, and on the shared FSx volume an fsGroup could make the kubelet chown every checkpoint.
Usage: {{- include "grpo-common.podSecurityContext" (dict "nonRoot" true) | nindent 6 }}
*/}}
{{- define "grpo-common.podSecurityContext" -}}
securityContext:
  {{- if .nonRoot }}
  runAsNonRoot: true
  runAsUser: {{ include "grpo-common.nonRootId" . }}
  runAsGroup: {{ include "grpo-common.nonRootId" . }}
  {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
Container securityContext for a non-root container with a read-only root filesystem: everything in
grpo-common.restrictedSecurityContext plus UID/GID 10001. Mount an emptyDir wherever the process writes (/tmp).
Usage: {{- include "grpo-common.nonRootSecurityContext" . | nindent 10 }}
*/}}
{{- define "grpo-common.nonRootSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  runAsUser: {{ include "grpo-common.nonRootId" . }}
  runAsGroup: {{ include "grpo-common.nonRootId" . }}
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
Reasons for the checkov findings the chart accepts on purpose, for every workload that has them. A reason
must not contain "=" (checkov splits the annotation value on every "=").
Usage: internal to grpo-common.checkovSkips.
*/}}
{{- define "grpo-common.checkovReasons" -}}
CKV_K8S_15: "imagePullPolicy IfNotPresent on purpose: images are pinned by exact tag or digest, and Always re-pulls on every restart and breaks air-gapped clusters"
CKV_K8S_43: "images are pinned by exact tag (grpo-lint GRPO701 enforces it) and image.digest is supported in values for digest pinning"
CKV_K8S_35: "HF_TOKEN comes from a secretKeyRef on purpose (Hugging Face Hub downloads read it from the environment); the value is never in the pod spec"
CKV_K8S_8: "helm test pod runs once to completion; a liveness probe is meaningless for it"
CKV_K8S_9: "helm test pod receives no traffic and runs once to completion; a readiness probe is meaningless for it"
{{- end -}}

{{/*
checkov skip annotations, one `checkov.io/skipN: <ID>=<reason>` per finding, for the object's own
metadata.annotations (checkov ignores pod-template annotations). "checks" lists IDs with a standard reason in
grpo-common.checkovReasons; "reasons" maps further IDs to a reason specific to this workload. Fails the render
on an unknown ID or a reason containing "=".
Usage: {{- include "grpo-common.checkovSkips" (dict "checks" (list "CKV_K8S_15" "CKV_K8S_43") "reasons" (dict "CKV_K8S_23" "why")) | nindent 4 }}
*/}}
{{- define "grpo-common.checkovSkips" -}}
{{- $standard := include "grpo-common.checkovReasons" . | fromYaml -}}
{{- $all := dict -}}
{{- range (.checks | default list) -}}
{{- $_ := set $all . (required (printf "no standard checkov reason for %s" .) (get $standard .)) -}}
{{- end -}}
{{- range $id, $reason := (.reasons | default dict) -}}
{{- $_ := set $all $id $reason -}}
{{- end -}}
{{- $lines := list -}}
{{- range $i, $id := keys $all | sortAlpha -}}
{{- $reason := get $all $id -}}
{{- if contains "=" $reason -}}
{{- fail (printf "checkov reason for %s contains '=', which checkov cannot read: %s" $id $reason) -}}
{{- end -}}
{{- $lines = append $lines (printf "checkov.io/skip%d: %s" (add1 $i) (printf "%s=%s" $id $reason | quote)) -}}
{{- end -}}
{{- join "\n" $lines -}}
{{- end -}}

{{/*
NetworkPolicy for a chart's helm test pod: its flows in grpo-common.flows (the Service under test and DNS).
Usage: {{ include "grpo-common.testNetworkPolicy" (dict "component" "vllm-test" "context" $) }}
*/}}
{{- define "grpo-common.testNetworkPolicy" -}}
{{- include "grpo-common.networkPolicy" (dict "component" .component "context" .context) -}}
{{- end -}}
