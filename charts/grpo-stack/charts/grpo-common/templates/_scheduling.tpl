{{/*
Scheduling and identity of a pod: the one place every pod of the release gets them. global.pod applies to every
pod; a component's `pod` values add to it (its scalars win over global.pod's); the chart's own settings win over
both: the instance-type selector, the chart's tolerations (the GPU taint) and affinity (the sandbox's
anti-affinity). A service-account token is mounted only where the values ask for an identity.
Arguments (a dict):
  context       the chart's root context ($)
  pod           the component's `pod` values; absent for a helm test hook (global.pod only, never an identity)
  instanceType  the instance type the pod runs on (node.kubernetes.io/instance-type); absent: no selector
  nodeSelector  the chart's own further node labels (the sandbox's dedicated node group)
  tolerations   the chart's own tolerations
  affinity      the chart's own affinity
Usage: {{- include "grpo-common.podScheduling" (dict "context" $ "pod" .Values.pod "instanceType" .Values.instanceType) | nindent 6 }}
*/}}
{{- define "grpo-common.podScheduling" -}}
{{- $g := .context.Values.global -}}
{{- $gp := $g.pod | default dict -}}
{{- $p := .pod | default dict -}}
{{- with $p.serviceAccountName }}
# An identity was asked for (IRSA / EKS Pod Identity): the pod runs as this account, with its token.
serviceAccountName: {{ . | quote }}
automountServiceAccountToken: true
{{- else }}
automountServiceAccountToken: false
{{- end }}
{{- with $g.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . | quote }}
  {{- end }}
{{- end }}
{{- with $p.priorityClassName | default $gp.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- $selector := dict -}}
{{- with .instanceType }}{{ $_ := set $selector "node.kubernetes.io/instance-type" . }}{{ end -}}
{{- $selector = merge $selector (.nodeSelector | default dict) ($p.nodeSelector | default dict) ($gp.nodeSelector | default dict) -}}
{{- with $selector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $required := concat ($gp.nodeAffinity | default list) ($p.nodeAffinity | default list) -}}
{{- $affinity := deepCopy (.affinity | default dict) -}}
{{- if $required -}}
{{- $terms := list (dict "matchExpressions" $required) -}}
{{- $_ := set $affinity "nodeAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (dict "nodeSelectorTerms" $terms)) -}}
{{- end -}}
{{- with $affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with concat (.tolerations | default list) ($gp.tolerations | default list) ($p.tolerations | default list) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A pod template's labels and annotations: the chart's standard labels and its own annotations, with global.pod's
and the component's `pod` labels and annotations added (the chart's win; the schema refuses a selector label).
Arguments (a dict): component, context, pod (absent for a helm test hook), annotations (the chart's own, a dict).
Usage: {{- include "grpo-common.podMetadata" (dict "component" "vllm" "context" $ "pod" .Values.pod) | nindent 6 }}
*/}}
{{- define "grpo-common.podMetadata" -}}
{{- $gp := .context.Values.global.pod | default dict -}}
{{- $p := .pod | default dict -}}
{{- $labels := include "grpo-common.labels.standard" (dict "component" .component "context" .context) | fromYaml -}}
{{- $labels = merge $labels ($p.labels | default dict) ($gp.labels | default dict) -}}
{{- $annotations := merge (deepCopy (.annotations | default dict)) ($p.annotations | default dict) ($gp.annotations | default dict) -}}
labels:
  {{- toYaml $labels | nindent 2 }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
