{{/*
The shared FSx volume, from global.storage.
Usage: {{- include "grpo-common.storageVolume" $ | nindent 8 }}
*/}}
{{- define "grpo-common.storageVolume" -}}
- name: storage
  persistentVolumeClaim:
    claimName: {{ .Values.global.storage.claimName | quote }}
{{- end -}}

{{/*
HF_TOKEN from the Secret named in global.secrets.hfToken: never a literal value in a pod spec.
Usage: {{- include "grpo-common.hfTokenEnv" $ | nindent 12 }}
*/}}
{{- define "grpo-common.hfTokenEnv" -}}
- name: HF_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.global.secrets.hfToken.name | quote }}
      key: {{ .Values.global.secrets.hfToken.key | quote }}
{{- end -}}

{{/*
Container resources with limits equal to requests (Guaranteed QoS for CPU pods).
Usage: {{- include "grpo-common.resources" .Values.resources | nindent 10 }}
*/}}
{{- define "grpo-common.resources" -}}
resources:
  requests:
    cpu: {{ .cpu | quote }}
    memory: {{ .memory | quote }}
  limits:
    cpu: {{ .cpu | quote }}
    memory: {{ .memory | quote }}
{{- end -}}

{{/*
Container securityContext for pods that need no privilege.
Usage: {{- include "grpo-common.restrictedSecurityContext" . | nindent 10 }}
*/}}
{{- define "grpo-common.restrictedSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}
