{{/*
Environment every Ray container needs. It is set on the pods themselves: the submit host's shell never
reaches the workers. The fabric settings come from typed keys (nccl.*, libfabric.*); by default
NCCL_SOCKET_IFNAME excludes interfaces rather than naming one, which would break on EFA nodes.
Usage: {{- include "raycluster.env" $ | nindent 12 }}
*/}}
{{- define "raycluster.env" -}}
- name: NCCL_SOCKET_IFNAME
  value: {{ .Values.nccl.socketIfname | quote }}
- name: NCCL_DEBUG
  value: {{ .Values.nccl.debug | quote }}
- name: FI_PROVIDER
  value: {{ .Values.libfabric.provider | quote }}
- name: FI_EFA_USE_DEVICE_RDMA
  value: {{ ternary "1" "0" .Values.libfabric.efaUseDeviceRdma | quote }}
- name: NCCL_NET_GDR_LEVEL
  value: {{ .Values.nccl.netGdrLevel | quote }}
- name: GRPO_JOB_SPEC
  value: "/etc/grpo-stack/job.json"
{{- with include "raycluster.rewardUrl" . }}
# Read by the verl reward function that calls the reward service (images/reward-service/clients).
- name: GRPO_REWARD_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.global.job.reward.timeoutSeconds }}
# The verl reward client's timeout per attempt; the reward service derives its deadlines from the same value.
- name: GRPO_REWARD_TIMEOUT_S
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
Pod-template annotation: a hash of what the Ray pods are made of (rayStartParams and the pod specs, as
rendered), so it changes exactly when a Ray pod would run differently. The job section is not in it: the
in-pod submit reads the job from its ConfigMap at submit time, so saveFreq or a batch size never recreates
the GPU cluster, and neither does switching the eval components on or off.
Usage: {{- include "raycluster.configHash" (list $headParams $headSpec $workerParams $workerSpec) }}
*/}}
{{- define "raycluster.configHash" -}}
grpo-stack.io/config-hash: {{ join "\n---\n" . | sha256sum | trunc 16 | quote }}
{{- end -}}

{{/*
The job spec the in-pod builder reads: the run's facts from values plus in-release endpoints built by the
one URL helper, and under release.values the release-level values the in-pod gate checks (the umbrella's
grpo-stack.jobReleaseValues; the builder ignores them). Rendered as JSON into the job ConfigMap.
Usage: {{ include "raycluster.jobSpec" (dict "context" $raycluster "releaseValues" $values) }}
*/}}
{{- define "raycluster.jobSpec" -}}
{{- $releaseValues := .releaseValues -}}
{{- with .context -}}
{{- $g := .Values.global -}}
{{- $endpoints := dict -}}
{{- if $g.components.sandboxFusion -}}
{{- $_ := set $endpoints "sandbox" (include "grpo-common.serviceUrl" (dict "component" "sandbox-fusion" "path" "/run_code" "context" .)) -}}
{{- end -}}
{{- with include "raycluster.rewardUrl" . -}}
{{- $_ := set $endpoints "reward" . -}}
{{- end -}}
{{- $spec := dict "release" (dict "name" .Release.Name "namespace" (include "grpo-common.namespace" .) "values" $releaseValues) "rayCluster" (include "grpo-common.rayClusterName" .) "cluster" $g.cluster "storage" $g.storage "secrets" $g.secrets "job" $g.job "endpoints" $endpoints -}}
{{- toPrettyJson $spec -}}
{{- end -}}
{{- end -}}

{{/*
Paths under global.storage.mountPath the Ray pods may write, relative to it: the checkpoint root and, for
miles, the Megatron torch_dist conversion of the model (written by the in-pod submit's conversion step next to
the Hugging Face weights, `<model.path>_torch_dist`). Everything else on the volume is read-only: models, data,
other runs' results. All come from global.job.
Usage: {{ include "raycluster.writablePaths" . | fromYamlArray }}
*/}}
{{- define "raycluster.writablePaths" -}}
{{- $job := .Values.global.job -}}
- {{ $job.trainer.checkpointDir | quote }}
{{- if eq $job.framework "miles" }}
- {{ printf "%s_torch_dist" (trimSuffix "/" $job.model.path) | quote }}
{{- end }}
{{- end -}}

{{/*
Volumes shared by head and workers.
Usage: {{- include "raycluster.volumes" . | nindent 10 }}
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

{{/*
Mounts shared by head and workers: the FSx volume read-only at mountPath, and each raycluster.writablePaths
entry read-write over it (a subPath of the same volume, so the path the job uses is unchanged).
Usage: {{- include "raycluster.volumeMounts" . | nindent 14 }}
*/}}
{{- define "raycluster.volumeMounts" -}}
{{- $mount := .Values.global.storage.mountPath -}}
- name: storage
  mountPath: {{ $mount | quote }}
  readOnly: true
{{- range include "raycluster.writablePaths" . | fromYamlArray }}
- name: storage
  mountPath: {{ printf "%s/%s" (trimSuffix "/" $mount) . | quote }}
  subPath: {{ . | quote }}
{{- end }}
- name: dshm
  mountPath: /dev/shm
- name: job-spec
  mountPath: /etc/grpo-stack
  readOnly: true
{{- end -}}

{{/*
Container securityContext of the Ray containers. Root stays (the image's user; FSx directories are root-owned),
but with no privilege escalation, RuntimeDefault seccomp and every capability dropped. The one exception,
IPC_LOCK on the EFA workers: libfabric's EFA provider registers (pins) the NCCL buffers with the device, and
pinned memory is capped by RLIMIT_MEMLOCK unless the process holds CAP_IPC_LOCK; without it NCCL's EFA transport
fails to register memory. The head has no EFA and gets nothing. docs/security.md lists both.
Usage: {{- include "raycluster.securityContext" (dict "efa" true) | nindent 12 }}
*/}}
{{- define "raycluster.securityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  privileged: false
  capabilities:
    drop: ["ALL"]
    {{- if .efa }}
    add: ["IPC_LOCK"]
    {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
rayStartParams of the head. The dashboard and job API listen on 127.0.0.1 unless raycluster.dashboard.exposed:
the in-pod submit and `kubectl port-forward` reach localhost, and nothing else needs them. KubeRay's own probes
call localhost too.
Usage: {{- include "raycluster.headStartParams" . | nindent 4 }}
*/}}
{{- define "raycluster.headStartParams" -}}
dashboard-host: {{ ternary "0.0.0.0" "127.0.0.1" .Values.dashboard.exposed | quote }}
num-cpus: "0"
num-gpus: "0"
{{- end -}}

{{/*
"true" when global.job.supervision.events.enabled, else empty: the supervisor on the head posts Kubernetes Events.
Usage: {{- if include "raycluster.events" . }}
*/}}
{{- define "raycluster.events" -}}
{{- $supervision := (.Values.global.job | default dict).supervision | default dict -}}
{{- if ($supervision.events | default dict).enabled }}true{{ end -}}
{{- end -}}

{{/*
global.job.supervision.stepMetricsPort, or empty: the port of the head where the in-pod submit serves the running
attempt's step metrics (stepmetrics/exporter.py).
Usage: {{- with include "raycluster.stepMetricsPort" . }}
*/}}
{{- define "raycluster.stepMetricsPort" -}}
{{- $supervision := (.Values.global.job | default dict).supervision | default dict -}}
{{- with $supervision.stepMetricsPort }}{{ . | int }}{{ end -}}
{{- end -}}

{{/*
The head's service account when Events are on: raycluster.head.pod.serviceAccountName, else the chart's own.
Usage: {{ include "raycluster.headServiceAccount" . }}
*/}}
{{- define "raycluster.headServiceAccount" -}}
{{- .Values.head.pod.serviceAccountName | default (include "grpo-common.fullname" (dict "component" "ray-head" "context" .)) -}}
{{- end -}}

{{/*
Pod-level settings shared by head and workers: no Service environment variables, RuntimeDefault seccomp. No
service-account token either unless the group's `pod.serviceAccountName` asks for an identity (grpo-common.podScheduling)
or, on the head, global.job.supervision.events does: otherwise nothing in a Ray pod calls the Kubernetes API (KubeRay's in-tree autoscaler, which would, is not enabled, and
the recipe reaches the head through `kubectl exec` from outside).
Usage: {{- include "raycluster.podCommon" . | nindent 0 }}
*/}}
{{- define "raycluster.podCommon" -}}
enableServiceLinks: false
{{ include "grpo-common.podSecurityContext" (dict "nonRoot" false) }}
{{- end -}}

{{/*
The head pod spec (CPU node, no GPU, no EFA).
Usage: {{- include "raycluster.headPodSpec" . | nindent 8 }}
*/}}
{{- define "raycluster.headPodSpec" -}}
{{ include "raycluster.podCommon" . }}
{{- $pod := .Values.head.pod }}
{{- if include "raycluster.events" . }}
{{- /* global.job.supervision.events: the supervisor in this pod posts Events as the head's account. */}}
{{- $pod = set (deepCopy .Values.head.pod) "serviceAccountName" (include "raycluster.headServiceAccount" .) }}
{{- end }}
{{ include "grpo-common.podScheduling" (dict "context" . "pod" $pod "instanceType" .Values.head.instanceType) }}
containers:
  - name: ray-head
    image: {{ include "grpo-common.image" (dict "image" .Values.image "context" $) | quote }}
    imagePullPolicy: IfNotPresent
    ports:
      - name: gcs
        containerPort: {{ include "grpo-common.port" "ray-gcs" }}
      - name: dashboard
        containerPort: {{ include "grpo-common.port" "ray-dashboard" }}
      - name: client
        containerPort: {{ include "grpo-common.port" "ray-client" }}
      {{- with include "raycluster.stepMetricsPort" . }}
      # The in-pod submit serves the step metrics here while it follows the run (global.job.supervision).
      - name: step-metrics
        containerPort: {{ . }}
      {{- end }}
    env:
      {{- include "raycluster.env" . | nindent 6 }}
      {{- if include "raycluster.events" . }}
      # The pod the supervisor's Events are about (supervise/events.py).
      - name: POD_NAME
        valueFrom:
          fieldRef:
            fieldPath: metadata.name
      {{- end }}
    {{- include "grpo-common.resources" .Values.head.resources | nindent 4 }}
    {{- include "raycluster.securityContext" (dict "efa" false) | nindent 4 }}
    volumeMounts:
      {{- include "raycluster.volumeMounts" . | nindent 6 }}
      - name: grpo-tools
        mountPath: /etc/grpo-stack-tools
        readOnly: true
volumes:
  {{- include "raycluster.volumes" . | nindent 2 }}
  # The in-pod submit's package (grpo-common.toolsConfigMapName): job mode's entrypoint runs it; optional, so a
  # release without it starts (cluster mode copies the package in with kubectl cp instead).
  - name: grpo-tools
    configMap:
      name: {{ include "grpo-common.toolsConfigMapName" . }}
      optional: true
{{- end -}}

{{/*
The GPU worker pod spec: the whole node, every GPU and every EFA interface.
Usage: {{- include "raycluster.workerPodSpec" . | nindent 10 }}
*/}}
{{- define "raycluster.workerPodSpec" -}}
{{- $g := .Values.global -}}
{{ include "raycluster.podCommon" . }}
{{- $gpuTaint := list (dict "key" "nvidia.com/gpu" "operator" "Exists" "effect" "NoSchedule") }}
{{ include "grpo-common.podScheduling" (dict "context" . "pod" .Values.worker.pod "instanceType" $g.cluster.gpuInstanceType "tolerations" $gpuTaint) }}
containers:
  - name: ray-worker
    image: {{ include "grpo-common.image" (dict "image" .Values.image "context" $) | quote }}
    imagePullPolicy: IfNotPresent
    env:
      {{- include "raycluster.env" . | nindent 6 }}
    resources:
      # The whole node: every GPU and every EFA interface. A partial EFA request is a
      # correctness problem (NCCL falls back), not just a slower run.
      requests:
        cpu: {{ .Values.worker.resources.cpu | quote }}
        memory: {{ .Values.worker.resources.memory | quote }}
        nvidia.com/gpu: {{ $g.cluster.gpusPerNode }}
        vpc.amazonaws.com/efa: {{ $g.cluster.efaPerNode }}
      limits:
        cpu: {{ .Values.worker.resources.cpu | quote }}
        memory: {{ .Values.worker.resources.memory | quote }}
        nvidia.com/gpu: {{ $g.cluster.gpusPerNode }}
        vpc.amazonaws.com/efa: {{ $g.cluster.efaPerNode }}
    {{- include "raycluster.securityContext" (dict "efa" (gt (int $g.cluster.efaPerNode) 0)) | nindent 4 }}
    volumeMounts:
      {{- include "raycluster.volumeMounts" . | nindent 6 }}
volumes:
  {{- include "raycluster.volumes" . | nindent 2 }}
{{- end -}}

{{/*
The Ray cluster's spec: the RayCluster's in cluster mode and, word for word, the RayJob's rayClusterSpec in job
mode (tests/chart/test_job_mode.py compares the two renders). The one field it leaves out is the RayCluster's own
`upgradeStrategy` (raycluster.yaml): KubeRay v1.6.0 and later refuse it on a cluster a RayJob creates
(utils/validation.go ValidateRayClusterUpgradeOptions), and a RayJob's cluster is never upgraded in place. Both pod specs are rendered first so the config hash
covers exactly what the pods are made of. Every Ray pod carries grpo-stack.io/ray-cluster (the release's cluster
name): a RayJob's cluster is named `<rayjob>-<5 random characters>` by KubeRay, so ray.io/cluster cannot select
its pods, and the NetworkPolicies select this label in both modes.
Usage: {{- include "raycluster.clusterSpec" . | nindent 2 }}
*/}}
{{- define "raycluster.clusterSpec" -}}
{{- $g := .Values.global -}}
{{- $headParams := include "raycluster.headStartParams" . -}}
{{- $headSpec := include "raycluster.headPodSpec" . -}}
{{- $workerParams := "{}" -}}
{{- $workerSpec := include "raycluster.workerPodSpec" . -}}
{{- $rayLabel := dict "grpo-stack.io/ray-cluster" (include "grpo-common.rayClusterName" .) -}}
{{- $headPod := merge (dict "labels" (merge (deepCopy $rayLabel) (.Values.head.pod.labels | default dict))) (deepCopy .Values.head.pod) -}}
{{- $workerPod := merge (dict "labels" (merge (deepCopy $rayLabel) (.Values.worker.pod.labels | default dict))) (deepCopy .Values.worker.pod) -}}
{{- $headMeta := include "grpo-common.podMetadata" (dict "component" "ray-head" "context" $ "pod" $headPod) -}}
{{- $workerMeta := include "grpo-common.podMetadata" (dict "component" "ray-worker" "context" $ "pod" $workerPod) -}}
{{- $hash := include "raycluster.configHash" (list $headParams $headSpec $workerParams $workerSpec $headMeta $workerMeta) -}}
rayVersion: {{ .Values.rayVersion | quote }}
headGroupSpec:
  # Zero GPUs and zero CPUs: Ray cannot place any actor or the job driver here, so nothing that imports
  # CUDA (Megatron, transformer_engine) lands on a pod without a driver. The head runs on a CPU node.
  rayStartParams:
    {{- $headParams | nindent 4 }}
  template:
    metadata:
      {{- include "grpo-common.podMetadata" (dict "component" "ray-head" "context" $ "pod" $headPod "annotations" ($hash | fromYaml)) | nindent 6 }}
    spec:
      {{- $headSpec | nindent 6 }}
workerGroupSpecs:
  - groupName: gpu
    # One worker per GPU node, from global.cluster.nodes: the only place the node count is written. worker.scaleToZero
    # frees the GPUs between runs: the operator deletes every worker pod and keeps the head (KubeRay v1.6+ leaves
    # replicas out of the spec hash its Recreate upgrade compares, so the head is not recreated either).
    {{- $workers := ternary 0 $g.cluster.nodes (.Values.worker.scaleToZero | default false) }}
    replicas: {{ $workers }}
    minReplicas: {{ $workers }}
    maxReplicas: {{ $g.cluster.nodes }}
    rayStartParams: {{ $workerParams }}
    template:
      metadata:
        {{- include "grpo-common.podMetadata" (dict "component" "ray-worker" "context" $ "pod" $workerPod "annotations" ($hash | fromYaml)) | nindent 8 }}
      spec:
        {{- $workerSpec | nindent 8 }}
{{- end -}}
