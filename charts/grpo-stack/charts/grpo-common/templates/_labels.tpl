{{/*
Standard labels for every object.
Usage: {{- include "grpo-common.labels.standard" (dict "component" "vllm" "context" $) | nindent 4 }}
*/}}
{{- define "grpo-common.labels.standard" -}}
{{ include "grpo-common.labels.matchLabels" . }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: grpo-stack
app.kubernetes.io/version: {{ .context.Chart.AppVersion | default .context.Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .context.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .context.Chart.Name .context.Chart.Version | replace "+" "_" | trunc 63 }}
{{- end -}}

{{/*
Selector labels: name and instance only, so selectors never change across upgrades.
Usage: {{- include "grpo-common.labels.matchLabels" (dict "component" "vllm" "context" $) | nindent 6 }}
*/}}
{{- define "grpo-common.labels.matchLabels" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
{{- end -}}

{{/*
This release's Ray head pod: the chart's grpo-stack.io/ray-cluster label (raycluster.clusterSpec; in job mode
KubeRay names the cluster `<rayjob>-<random>`, so ray.io/cluster is not knowable) and the node type KubeRay puts
on it (ray-operator utils/constant.go); `ray-node-type` (unprefixed) matches nothing.
Usage: {{- include "grpo-common.rayHeadSelector" $ | nindent 10 }}
*/}}
{{- define "grpo-common.rayHeadSelector" -}}
grpo-stack.io/ray-cluster: {{ include "grpo-common.rayClusterName" . }}
ray.io/node-type: head
{{- end -}}

{{/*
Labels that match every Ray pod (head and workers) of this release's cluster.
Usage: {{- include "grpo-common.rayPodSelector" $ | nindent 10 }}
*/}}
{{- define "grpo-common.rayPodSelector" -}}
grpo-stack.io/ray-cluster: {{ include "grpo-common.rayClusterName" . }}
{{- end -}}
