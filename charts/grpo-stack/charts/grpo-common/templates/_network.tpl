{{/*
Network flows: the ONE list of every connection the release's pods may make. Everything else is denied: the
umbrella renders a default-deny NetworkPolicy for all of the release's pods (grpo-common.defaultDenyNetworkPolicy),
and each component renders one NetworkPolicy that admits exactly its flows from this list
(grpo-common.networkPolicy). A feature that needs a new connection adds one entry here, with its reason;
docs/security.md's flow table is checked against this list (tests/chart/test_network_flows.py).

Each flow: from / to (a peer, below), ports (list of {port, protocol}; empty = every port), why.
Peers: a component name (its pods: app.kubernetes.io/name + instance), "egress:<name>" (a declared flow of
global.network.egress: its typed peer travels with it as "peer"), "ray" (this release's Ray pods, by
grpo-stack.io/ray-cluster), "dns" (kube-dns / CoreDNS in any namespace), "public" (addresses outside the private, CGNAT and
link-local ranges: no cluster pod, node or instance-metadata address), "namespace" (any pod in the release
namespace), "any-namespace" (any pod in any namespace), "prometheus" (any pod in
global.monitoring.prometheusNamespace), "kuberay-operator" (any pod in global.run.operatorNamespace), "ray-head"
(this release's Ray head pod), "apiserver" (global.job.supervision.events.apiServerCidrs: the API server's endpoints).
Usage: {{ include "grpo-common.flows" $ | fromYamlArray }}
*/}}
{{- define "grpo-common.flows" -}}
{{- $g := .Values.global -}}
{{- $c := $g.components -}}
{{- $job := $g.job | default dict -}}
{{- $reward := $job.reward | default dict -}}
{{- $trainer := $job.trainer | default dict -}}
{{- $flows := list -}}
{{- /* Values of other charts, read from the umbrella or from inside that chart; a key a chart does not have yet
       keeps the flow (components.raycluster absent = the Ray cluster is installed). */ -}}
{{- $rc := ternary .Values (.Values.raycluster | default dict) (eq .Chart.Name "raycluster") -}}
{{- $le := ternary .Values (index .Values "lm-eval" | default dict) (eq .Chart.Name "lm-eval") -}}
{{- $ray := or (not (hasKey $c "raycluster")) $c.raycluster -}}
{{- if $ray -}}
{{- /* The Ray cluster: NCCL, torch.distributed, vLLM and Ray itself pick random ports between its pods. */ -}}
{{- $flows = append $flows (dict "from" "ray" "to" "ray" "ports" list "why" "Ray GCS, object store, NCCL/torch.distributed bootstrap and vLLM use random ports between the cluster's own pods") -}}
{{- $flows = append $flows (dict "from" "ray" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "name resolution (head Service, in-release Services)") -}}
{{- $events := ($job.supervision | default dict).events | default dict -}}
{{- if $events.enabled -}}
{{- $flows = append $flows (dict "from" "ray-head" "to" "apiserver" "ports" (list (dict "port" ($events.apiServerPort | default 443 | int))) "why" "global.job.supervision.events: the supervisor on the head posts Kubernetes Events about the run") -}}
{{- end -}}
{{- $flows = append $flows (dict "from" "any-namespace" "to" "ray" "ports" (list (dict "port" (include "grpo-common.port" "ray-metrics" | int))) "why" "Prometheus scrapes Ray's metrics port (counters only); the scraper's namespace differs per cluster") -}}
{{- with ($job.supervision | default dict).stepMetricsPort -}}
{{- $flows = append $flows (dict "from" "any-namespace" "to" "ray" "ports" (list (dict "port" (. | int))) "why" "global.job.supervision.stepMetricsPort: Prometheus scrapes the training step metrics the submit serves on the head (gauges of the last step, never samples)") -}}
{{- end -}}
{{- if ($rc.dashboard | default dict).exposed -}}
{{- $flows = append $flows (dict "from" "namespace" "to" "ray" "ports" (list (dict "port" (include "grpo-common.port" "ray-dashboard" | int))) "why" "raycluster.dashboard.exposed: pods in the release namespace may use the Ray dashboard and job API") -}}
{{- end -}}
{{- if eq (($g.run | default dict).mode | default "cluster") "job" -}}
{{- $flows = append $flows (dict "from" "kuberay-operator" "to" "ray" "ports" (list (dict "port" (include "grpo-common.port" "ray-dashboard" | int))) "why" "global.run.mode job: the KubeRay operator polls the RayJob's status from the dashboard's job API, from global.run.operatorNamespace") -}}
{{- end -}}
{{- end -}}
{{- if $c.rewardService -}}
{{- if $ray }}{{ $flows = append $flows (dict "from" "ray" "to" "reward-service" "ports" (list (dict "port" (include "grpo-common.port" "reward-service" | int))) "why" "the trainers' reward workers post responses to /score") }}{{ end -}}
{{- $flows = append $flows (dict "from" "any-namespace" "to" "reward-service" "ports" (list (dict "port" (include "grpo-common.port" "reward-service-metrics" | int))) "why" "Prometheus scrapes the metrics port (counters and histograms, never scores or inputs)") -}}
{{- $flows = append $flows (dict "from" "reward-service-test" "to" "reward-service" "ports" (list (dict "port" (include "grpo-common.port" "reward-service" | int))) "why" "helm test posts one scoring request") -}}
{{- $flows = append $flows (dict "from" "reward-service-test" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "helm test resolves the Service name") -}}
{{- end -}}
{{- if $c.sandboxFusion -}}
{{- /* No flow from the Ray pods: the trainers score code through the reward service, never the sandbox itself. */ -}}
{{- if $c.rewardService -}}
{{- $flows = append $flows (dict "from" "reward-service" "to" "sandbox-fusion" "ports" (list (dict "port" (include "grpo-common.port" "sandbox-fusion" | int))) "why" "the reward service's code routes run answers in the sandbox") -}}
{{- $flows = append $flows (dict "from" "reward-service" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "the reward service resolves the sandbox Service name") -}}
{{- end -}}
{{- $flows = append $flows (dict "from" "sandbox-fusion-test" "to" "sandbox-fusion" "ports" (list (dict "port" (include "grpo-common.port" "sandbox-fusion" | int))) "why" "helm test runs print(42)") -}}
{{- $flows = append $flows (dict "from" "sandbox-fusion-test" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "helm test resolves the Service name") -}}
{{- end -}}
{{- if and $ray (eq ($reward.kind | default "") "external") -}}
{{- $url := urlParse ($reward.url | default "") -}}
{{- $port := (splitList ":" $url.host | rest | first) | default (ternary "443" "80" (eq $url.scheme "https")) | int -}}
{{- $flows = append $flows (dict "from" "ray" "to" "public" "ports" (list (dict "port" $port)) "why" "global.job.reward.kind external: the reward workers call global.job.reward.url") -}}
{{- $flows = append $flows (dict "from" "ray" "to" "namespace" "ports" (list (dict "port" $port)) "why" "global.job.reward.kind external: the URL may name a Service in the release namespace") -}}
{{- end -}}
{{- if and $ray (or (has "wandb" ($trainer.logger | default list)) (has "mlflow" ($trainer.logger | default list))) -}}
{{- $flows = append $flows (dict "from" "ray" "to" "public" "ports" (list (dict "port" 443)) "why" "global.job.trainer.logger names wandb or mlflow: the trainer sends metrics to the tracking server over HTTPS") -}}
{{- end -}}
{{- if $c.fsxUtils -}}
{{- $flows = append $flows (dict "from" "fsx-utils" "to" "public" "ports" (list (dict "port" 443)) "why" "model and dataset downloads from the Hugging Face Hub over HTTPS onto FSx") -}}
{{- $flows = append $flows (dict "from" "fsx-utils" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "name resolution for the downloads") -}}
{{- end -}}
{{- if $c.vllm -}}
{{- $flows = append $flows (dict "from" "vllm-test" "to" "vllm" "ports" (list (dict "port" (include "grpo-common.port" "vllm" | int))) "why" "helm test lists the served model") -}}
{{- $flows = append $flows (dict "from" "vllm-test" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "helm test resolves the Service name") -}}
{{- if $g.monitoring -}}
{{- $flows = append $flows (dict "from" "prometheus" "to" "vllm" "ports" (list (dict "port" (include "grpo-common.port" "vllm" | int))) "why" "global.monitoring: Prometheus scrapes vLLM's /metrics, served on the API port, so only its namespace is admitted") -}}
{{- end -}}
{{- if $c.lmEval -}}
{{- $flows = append $flows (dict "from" "lm-eval" "to" "vllm" "ports" (list (dict "port" (include "grpo-common.port" "vllm" | int))) "why" "evaluation requests to the release's vLLM server") -}}
{{- end -}}
{{- end -}}
{{- if $c.lmEval -}}
{{- $flows = append $flows (dict "from" "lm-eval" "to" "dns" "ports" (include "grpo-common.dnsPorts" . | fromYamlArray) "why" "name resolution (vLLM Service, the Hub)") -}}
{{- if or (not (hasKey $le "allowPublicHttps")) $le.allowPublicHttps }}{{ $flows = append $flows (dict "from" "lm-eval" "to" "public" "ports" (list (dict "port" 443)) "why" "lm-eval.allowPublicHttps: benchmark data not in the image, from the Hugging Face Hub over HTTPS; no cluster range, no instance metadata") }}{{ end -}}
{{- end -}}
{{- /* Declared flows (global.network.egress): to a peer outside the release, typed; the peer goes with the flow. */ -}}
{{- range (($g.network | default dict).egress | default list) -}}
{{- $flows = append $flows (dict "from" .from "to" (printf "egress:%s" .name) "peer" .to "ports" .ports "why" (printf "global.network.egress %s: %s" .name .why)) -}}
{{- end -}}
{{- toYaml $flows -}}
{{- end -}}

{{/*
DNS ports (UDP and TCP 53), as a YAML list of NetworkPolicy ports.
Usage: {{ include "grpo-common.dnsPorts" . | fromYamlArray }}
*/}}
{{- define "grpo-common.dnsPorts" -}}
- port: 53
  protocol: UDP
- port: 53
  protocol: TCP
{{- end -}}

{{/*
A NetworkPolicy peer for a peer name of grpo-common.flows.
Usage: {{- include "grpo-common.networkPeer" (dict "peer" "ray" "context" $) | nindent 8 }}
*/}}
{{- define "grpo-common.networkPeer" -}}
{{- if eq .peer "ray" -}}
- podSelector:
    matchLabels:
      {{- include "grpo-common.rayPodSelector" .context | nindent 6 }}
{{- else if eq .peer "dns" -}}
- namespaceSelector: {}
  podSelector:
    matchLabels:
      k8s-app: kube-dns
{{- else if eq .peer "public" -}}
- ipBlock:
    cidr: 0.0.0.0/0
    except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, 169.254.0.0/16]
{{- else if eq .peer "apiserver" -}}
{{- range .context.Values.global.job.supervision.events.apiServerCidrs }}
- ipBlock:
    cidr: {{ . | quote }}
{{- end }}
{{- else if eq .peer "ray-head" -}}
- podSelector:
    matchLabels:
      {{- include "grpo-common.rayHeadSelector" .context | nindent 6 }}
{{- else if eq .peer "prometheus" -}}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ .context.Values.global.monitoring.prometheusNamespace }}
{{- else if eq .peer "kuberay-operator" -}}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ .context.Values.global.run.operatorNamespace | quote }}
{{- else if eq .peer "namespace" -}}
- podSelector: {}
{{- else if eq .peer "any-namespace" -}}
- namespaceSelector: {}
{{- else if hasPrefix "egress:" .peer -}}
{{- include "grpo-common.declaredPeer" .flow.peer -}}
{{- else -}}
- podSelector:
    matchLabels:
      {{- include "grpo-common.labels.matchLabels" (dict "component" .peer "context" .context) | nindent 6 }}
{{- end -}}
{{- end -}}

{{/*
The peer of a declared flow (global.network.egress[].to): an ipBlock for `cidr`, else a namespace selector (by
`namespace` and `namespaceLabels`) and/or a pod selector (`podLabels`).
Usage: internal to grpo-common.networkPeer.
*/}}
{{- define "grpo-common.declaredPeer" -}}
{{- $peer := dict -}}
{{- if .cidr -}}
{{- $block := dict "cidr" .cidr -}}
{{- with .exceptCidrs }}{{ $_ := set $block "except" . }}{{ end -}}
{{- $_ := set $peer "ipBlock" $block -}}
{{- else -}}
{{- if or .namespace .namespaceLabels -}}
{{- $labels := merge (dict) (.namespaceLabels | default dict) -}}
{{- with .namespace }}{{ $_ := set $labels "kubernetes.io/metadata.name" . }}{{ end -}}
{{- $_ := set $peer "namespaceSelector" (dict "matchLabels" $labels) -}}
{{- end -}}
{{- with .podLabels }}{{ $_ := set $peer "podSelector" (dict "matchLabels" .) }}{{ end -}}
{{- end -}}
{{- toYaml (list $peer) -}}
{{- end -}}

{{/*
The pod selector of a component's NetworkPolicy ("ray": the Ray pods; else the component's match labels).
Usage: {{- include "grpo-common.networkSelector" (dict "component" "vllm" "context" $) | nindent 4 }}
*/}}
{{- define "grpo-common.networkSelector" -}}
matchLabels:
{{- if eq .component "ray" }}
  {{- include "grpo-common.rayPodSelector" .context | nindent 2 }}
{{- else if eq .component "ray-head" }}
  {{- include "grpo-common.rayHeadSelector" .context | nindent 2 }}
{{- else }}
  {{- include "grpo-common.labels.matchLabels" (dict "component" .component "context" .context) | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
One rule (ingress "from" or egress "to") per flow.
Usage: internal to grpo-common.networkPolicy.
*/}}
{{- define "grpo-common.networkRules" -}}
{{- range .flows }}
# {{ .why }}
- {{ $.direction }}:
    {{- include "grpo-common.networkPeer" (dict "peer" (get . $.peerKey) "flow" . "context" $.context) | nindent 4 }}
  {{- with .ports }}
  ports:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}

{{/*
A component's NetworkPolicy: ingress and egress are exactly its flows in grpo-common.flows (none = none).
Usage: {{ include "grpo-common.networkPolicy" (dict "component" "vllm" "context" $) }}
*/}}
{{- define "grpo-common.networkPolicy" -}}
{{- $flows := include "grpo-common.flows" .context | fromYamlArray -}}
{{- $in := list -}}
{{- $out := list -}}
{{- range $flows -}}
{{- if eq .to $.component }}{{ $in = append $in . }}{{ end -}}
{{- if eq .from $.component }}{{ $out = append $out . }}{{ end -}}
{{- end -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "grpo-common.fullname" (dict "component" .component "context" .context) }}
  namespace: {{ include "grpo-common.namespace" .context | quote }}
  labels:
    {{- include "grpo-common.labels.standard" (dict "component" .component "context" .context) | nindent 4 }}
spec:
  podSelector:
    {{- include "grpo-common.networkSelector" . | nindent 4 }}
  policyTypes: [Ingress, Egress]
  {{- if $in }}
  ingress:
    {{- include "grpo-common.networkRules" (dict "flows" $in "direction" "from" "peerKey" "from" "context" .context) | trim | nindent 4 }}
  {{- else }}
  ingress: []
  {{- end }}
  {{- if $out }}
  egress:
    {{- include "grpo-common.networkRules" (dict "flows" $out "direction" "to" "peerKey" "to" "context" .context) | trim | nindent 4 }}
  {{- else }}
  egress: []
  {{- end }}
{{- end -}}

{{/*
Default deny for every pod of the release (app.kubernetes.io/instance): no ingress, no egress, unless a
component's NetworkPolicy admits a flow from grpo-common.flows. The flows are listed on the object
(grpo-stack.io/flows) so `kubectl get networkpolicy -o yaml` shows what the release allows.
Usage: {{ include "grpo-common.defaultDenyNetworkPolicy" $ }}
*/}}
{{- define "grpo-common.defaultDenyNetworkPolicy" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "grpo-common.fullname" (dict "component" "default-deny" "context" .) }}
  namespace: {{ include "grpo-common.namespace" . | quote }}
  labels:
    {{- include "grpo-common.labels.standard" (dict "component" "default-deny" "context" .) | nindent 4 }}
  annotations:
    grpo-stack.io/flows: {{ include "grpo-common.flows" . | fromYamlArray | toJson | quote }}
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  policyTypes: [Ingress, Egress]
  ingress: []
  egress: []
{{- end -}}
