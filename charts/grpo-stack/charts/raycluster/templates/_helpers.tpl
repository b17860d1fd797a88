{{/*
Environment every Ray container needs. It is set on the pods themselves: the submit host's shell never
reaches the workers. NCCL_SOCKET_IFNAME excludes interfaces rather than naming one, which breaks on EFA nodes.
Usage: {{- include "raycluster.env" $ | nindent 12 }}
*/}}
{{- define "raycluster.env" -}}
- name: NCCL_SOCKET_IFNAME
  value: "^docker,lo,veth"
- name: NCCL_DEBUG
  value: {{ .Values.nccl.debug | quote }}
- name: FI_PROVIDER
  value: "efa"
- name: FI_EFA_USE_DEVICE_RDMA
  value: "1"
- name: NCCL_NET_GDR_LEVEL
  value: "PHB"
- name: GRPO_JOB_SPEC
  value: "/etc/grpo-stack/job.json"
{{- with include "raycluster.rewardUrl" . }}
# Read by the verl reward function that calls the reward service (images/reward-service/clients).
- name: GRPO_REWARD_URL
  value: {{ . | quote }}
{{- end }}
{{ include "grpo-common.hfTokenEnv" . }}
{{- include "raycluster.trackingEnv" . }}
{{- with .Values.global.job.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Experiment tracking on the Ray pods: the tracker credential by secretKeyRef, under the variable W&B / MLflow read
(global.secrets.tracking.key), and TensorBoard's directory under the run's checkpoint directory on the shared
filesystem (verl and miles both read TENSORBOARD_DIR), not the pod's working directory.
*/}}
{{- define "raycluster.trackingEnv" -}}
{{- $g := .Values.global -}}
{{- with $g.secrets.tracking }}
- name: {{ .key }}
  valueFrom:
    secretKeyRef:
      name: {{ .name | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- if has "tensorboard" $g.job.trainer.logger }}
- name: TENSORBOARD_DIR
  value: {{ printf "%s/%s/tensorboard" (trimSuffix "/" $g.storage.mountPath) $g.job.trainer.checkpointDir | quote }}
{{- end }}
{{- end -}}

{{/*
Where rewards are scored remotely: an external URL the values name, else this release's reward service.
Usage: {{ include "raycluster.rewardUrl" . }}
*/}}
{{- define "raycluster.rewardUrl" -}}
{{- $job := .Values.global.job -}}
{{- if eq $job.reward.kind "external" -}}
{{- $job.reward.url -}}
{{- else if .Values.global.components.rewardService -}}
{{- include "grpo-common.serviceUrl" (dict "component" "reward-service" "path" "/score" "context" .) -}}
{{- end -}}
{{- end -}}

{{/*
Pod-template annotations: a hash of everything that shapes the pods, so `helm upgrade` changes the template
and KubeRay's Recreate upgrade strategy rolls the Ray pods.
Usage: {{- include "raycluster.podAnnotations" $ | nindent 8 }}
*/}}
{{- define "raycluster.podAnnotations" -}}
grpo-stack.io/config-hash: {{ printf "%s%s" (toJson .Values) (include "raycluster.jobSpec" .) | sha256sum | trunc 16 | quote }}
{{- end -}}

{{/*
The job spec the in-pod builder reads: the run's facts from values plus in-release endpoints built by the
one URL helper. Rendered as JSON into the job ConfigMap.
Usage: {{ include "raycluster.jobSpec" $ }}
*/}}
{{- define "raycluster.jobSpec" -}}
{{- $g := .Values.global -}}
{{- $endpoints := dict -}}
{{- if $g.components.sandboxFusion -}}
{{- $_ := set $endpoints "sandbox" (include "grpo-common.serviceUrl" (dict "component" "sandbox-fusion" "path" "/run_code" "context" .)) -}}
{{- end -}}
{{- with include "raycluster.rewardUrl" . -}}
{{- $_ := set $endpoints "reward" . -}}
{{- end -}}
{{- $spec := dict "release" (dict "name" .Release.Name "namespace" (include "grpo-common.namespace" .)) "rayCluster" (include "grpo-common.rayClusterName" .) "cluster" $g.cluster "storage" $g.storage "secrets" $g.secrets "job" $g.job "endpoints" $endpoints -}}
{{- toPrettyJson $spec -}}
{{- end -}}

{{/*
Volumes and mounts shared by head and workers.
*/}}
{{- define "raycluster.volumes" -}}
{{ include "grpo-common.storageVolume" . }}
- name: dshm
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.worker.shmSize }}
- name: job-spec
  configMap:
    name: {{ include "grpo-common.jobConfigMapName" . }}
{{- end -}}

{{- define "raycluster.volumeMounts" -}}
- name: storage
  mountPath: {{ .Values.global.storage.mountPath | quote }}
- name: dshm
  mountPath: /dev/shm
- name: job-spec
  mountPath: /etc/grpo-stack
  readOnly: true
{{- end -}}
