{{/*
Labels of a monitoring object: the standard set plus global.monitoring.labels (what the Prometheus's monitor and
rule selectors ask for, e.g. kube-prometheus-stack's `release`).
Usage: {{- include "grpo-common.monitoringLabels" (dict "component" "reward-service" "context" $) | nindent 4 }}
*/}}
{{- define "grpo-common.monitoringLabels" -}}
{{ include "grpo-common.labels.standard" . }}
{{- with .context.Values.global.monitoring.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
A PodMonitor (Prometheus Operator, monitoring.coreos.com/v1) for a component's pods, rendered only when
global.monitoring is set. "port" names a container port of those pods, "ports" several (one endpoint each: a pod
without one of them is simply not scraped on it); "ray" selects this release's Ray pods (head and workers, by
grpo-stack.io/ray-cluster: the same in both run modes) and keeps KubeRay's ray.io/cluster label as `ray_io_cluster`,
as KubeRay's dashboards expect.
Usage: {{ include "grpo-common.podMonitor" (dict "component" "reward-service" "port" "metrics" "context" $) }}
*/}}
{{- define "grpo-common.podMonitor" -}}
{{- with .context.Values.global.monitoring }}
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: {{ include "grpo-common.fullname" (dict "component" $.component "context" $.context) }}
  namespace: {{ include "grpo-common.namespace" $.context | quote }}
  labels:
    {{- include "grpo-common.monitoringLabels" (dict "component" $.component "context" $.context) | nindent 4 }}
spec:
  selector:
    {{- include "grpo-common.networkSelector" (dict "component" $.component "context" $.context) | nindent 4 }}
  podMetricsEndpoints:
    {{- range $port := $.ports | default (list $.port) }}
    - port: {{ $port }}
      path: /metrics
      interval: {{ $.context.Values.global.monitoring.interval }}
      {{- if eq $.component "ray" }}
      relabelings:
        - action: replace
          sourceLabels: [__meta_kubernetes_pod_label_ray_io_cluster]
          targetLabel: ray_io_cluster
      {{- end }}
    {{- end }}
{{- end }}
{{- end -}}
