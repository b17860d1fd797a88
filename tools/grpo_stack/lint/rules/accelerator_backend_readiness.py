"""GRPO862 accelerator-backend-readiness."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked
from ._objects import containers, runs_to_completion
from ._one_shot import idles_only
from ._services import backends
from ._serving import is_model_server

CODE = "GRPO862"
NAME = "accelerator-backend-readiness"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("Pods with an accelerator that a Service routes to have no readiness probe: they get requests before "
           "their model has loaded.")
DOC = """## What it does
For every Service in the set, finds the long-running pods its selector matches (Deployments, StatefulSets,
DaemonSets, ReplicaSets, Pods that restart, the pods of custom resources) that ask for an accelerator (a GPU, MIG
slice, TPU, Neuron device, Gaudi, ...) and in which no container has a `readinessProbe`. This is GRPO503 for
servers no rule can name: a speech or vision model's own image, a project's app. Model servers GRPO503 knows are
its, and containers that only sleep are GRPO849's and GRPO854's. A warning: it assumes that a pod holding an
accelerator behind a Service serves a model, which loads before it answers; a notebook or a dashboard on a GPU
node listens within seconds.

## Why is this bad?
A pod with no readiness probe is Ready as soon as its containers start, so the Service's endpoints include it
while it is still downloading and loading its weights, and keep it when it stops answering. A rolling update
counts the new pod available and stops the old one at once: clients see refused connections, 502s or hangs for
as long as the load takes, on every rollout.

## Example
```yaml
kind: Service
spec:
  selector: {app: whisper}
  ports: [{port: 7066, targetPort: 7066}]
---
kind: Deployment
spec:
  template:
    metadata: {labels: {app: whisper}}
    spec:
      containers:
        - name: whisper
          image: opea/whisper-gaudi:1.2
          ports: [{containerPort: 7066}]
          resources: {limits: {habana.ai/gaudi: 1}}
```
Use instead:
```yaml
      containers:
        - name: whisper
          image: opea/whisper-gaudi:1.2
          ports: [{containerPort: 7066}]
          resources: {limits: {habana.ai/gaudi: 1}}
          readinessProbe:
            httpGet: {path: /v1/health_check, port: 7066}
```

## Fix
Add a readinessProbe on the port the Service targets: the server's health path (`httpGet`), or a `tcpSocket`
check where it has none; and a startupProbe that allows for the load.
"""


def check(ctx) -> Iterator[Hit]:
    seen: set[tuple[int, str]] = set()
    for b in backends(ctx):
        if b.obj.kind != "Service":
            continue  # a head Service KubeRay creates: its head's readiness is KubeRay's
        for o, pod_path, pod in b.pods:
            if (id(o), pod_path) in seen or runs_to_completion(o, pod_path, pod):
                continue
            seen.add((id(o), pod_path))
            mains = [(i, c) for field, i, c in containers(pod) if field == "containers"]
            if not mains or any(c.get("readinessProbe") for _i, c in mains):
                continue
            if any(is_model_server(c) or idles_only(c) for _i, c in mains):
                continue  # GRPO503's, or GRPO849's and GRPO854's
            if not any(asked(c) for _i, c in mains):
                continue  # no accelerator: nothing says the server loads for minutes
            i, c = _serving(mains, b)
            yield Hit(f"{pod_path}.containers.{i}", f"{o.kind} {o.name}: Service {b.name} routes to it, and "
                      f"container {c.get('name', i)} has no readinessProbe; it gets requests as soon as it starts, "
                      "before the model it holds an accelerator for has loaded (assumed: the pod serves a model)",
                      obj=o)


def _serving(mains, backend) -> tuple[int, dict]:
    """The container that declares a port the Service targets (by number or name); else the first."""
    targets = {str(p.target) for p in backend.ports}
    for i, c in mains:
        for p in c.get("ports") or []:
            if isinstance(p, dict) and (str(p.get("containerPort")) in targets or str(p.get("name")) in targets):
                return i, c
    return mains[0]
