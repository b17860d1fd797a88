"""GRPO503 serving-readiness."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._services import backends
from ._serving import is_model_server, loads_no_model_at_start, serving_containers

CODE = "GRPO503"
NAME = "serving-readiness"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A model server (vLLM, SGLang, TGI, Triton, ...) has no readiness probe: it gets traffic before the "
           "model has loaded.")
DOC = """## What it does
Finds model-server containers (vLLM, SGLang, TGI, Triton, TensorFlow Serving, lmdeploy, ollama, TorchServe,
llama.cpp, TensorRT-LLM, LocalAI; known by the command that starts them or by the server image running its own
entrypoint) in Deployments, StatefulSets, ReplicaSets, DaemonSets, Pods and LeaderWorkerSets, and in Jobs whose pods
a Service of the set routes to (a model served for the length of a batch), that have no `readinessProbe`. A server
that loads no model when it starts is not reported: Ollama loads a model on the first request that names it (unless
its command or a postStart hook pulls one at start, which is reported), and Triton under
`--model-control-mode=explicit` without `--load-model` loads only what an API call asks for, and LocalAI started
with no model (none in its arguments or `MODELS`/`PRELOAD_MODELS`, not an All-in-One image) loads one on the first
request that names it; such a server answers as soon as it listens (GRPO862 reports it behind a public Service that
rolls). GRPO862 reports servers no rule can name that hold an accelerator behind a Service.

## Why is this bad?
Without a readiness probe a pod is Ready as soon as its containers start. A model server starts by downloading
and loading weights, minutes to an hour for a large model, and only then answers; until then every Service in
front of it routes requests to a port that refuses them or hangs, a rollout counts the new pod available and
stops the old one, and `kubectl wait --for=condition=Ready` returns at once.

## Example
```yaml
containers:
  - name: server
    image: vllm/vllm-openai:v0.10.0
    args: ["--model", "Qwen/Qwen3-8B", "--port", "8000"]
```
Use instead:
```yaml
containers:
  - name: server
    image: vllm/vllm-openai:v0.10.0
    args: ["--model", "Qwen/Qwen3-8B", "--port", "8000"]
    readinessProbe:
      httpGet: {path: /health, port: 8000}
      periodSeconds: 10
```

## Fix
Add a readinessProbe on the server's health endpoint (vLLM and SGLang `/health`, TGI `/health`, Triton
`/v2/health/ready`, TF Serving `/v1/models/<name>`), and a startupProbe that allows for the load.
"""


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, _pod, i, c in [*serving_containers(ctx), *_served_jobs(ctx)]:
        if not c.get("readinessProbe") and not loads_no_model_at_start(c):
            yield Hit(f"{pod_path}.containers.{i}", f"{o.kind} {o.name}: model server {c.get('name', i)} has no "
                      "readinessProbe; it is Ready, and gets traffic, before its model has loaded", obj=o)


def _served_jobs(ctx):
    """Model-server containers of a Job's pods that a Service of the set routes to: a server run for the length of
    a batch (an evaluation's or an agent run's model), whose clients call it through the Service."""
    seen = set()
    for b in backends(ctx):
        for o, pod_path, pod in b.pods:
            if o.kind not in ("Job", "CronJob") or (id(o), pod_path) in seen:
                continue
            seen.add((id(o), pod_path))
            for i, c in enumerate(pod.get("containers") or []):
                if isinstance(c, dict) and is_model_server(c):
                    yield o, pod_path, pod, i, c
