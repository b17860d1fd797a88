"""GRPO862 backend-readiness."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...apivalidation.podspecs import pod_metadata
from ..finding import Hit, Severity
from ..shell import commands_in, pip_install_words, scripts
from ._accelerators import asked
from ._cache_paths import downloads
from ._objects import containers, runs_to_completion
from ._one_shot import idles_only, training_launcher, waits_after_setup
from ._podsecurity import is_ray_pod
from ._services import backends
from ._serving import SERVING_KINDS, is_model_server, is_notebook, loads_no_model_at_start

CODE = "GRPO862"
NAME = "backend-readiness"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("Pods with an accelerator that a Service routes to have no readiness probe: they get requests before "
           "they have loaded the model they hold the accelerator for.")
DOC = """## What it does
For every Service in the set, finds the long-running pods its selector matches (Deployments, StatefulSets,
DaemonSets, ReplicaSets, Pods that restart, the pods of custom resources) that ask for an accelerator (a GPU, MIG
slice, TPU, Neuron device, Gaudi, ...) and in which no container has a `readinessProbe`. This is GRPO503 for servers
no rule can name: a speech or vision model's own image, a project's app. Model servers GRPO503 knows are its,
containers that only sleep, or set up and then sleep (a test host kept for `kubectl exec`), are GRPO849's and
GRPO854's or serve nothing, and a pod running a training launcher (`torchrun`, `deepspeed`, ...) serves nothing (a
Service in front of it is its rendezvous). Nor is a StatefulSet's governing Service (headless, its `serviceName`):
it names each pod in DNS and balances no requests. In a set with no Service at all (a Deployment file applied apart
from its Service), such a pod of a serving workload whose container declares a port is reported too, naming the
assumption that a Service elsewhere routes to it. A warning: it assumes that a pod holding an accelerator behind a
Service serves a model, which loads before it answers; a notebook or a dashboard on a GPU node listens within
seconds.

Pods without an accelerator are not reported, behind a public Service or not, unless a container downloads a model from
the Hub when it starts (`--model-id`, a model env it reads, `snapshot_download`: an embedding or speech model on CPUs),
the sign that it loads something before it answers, or its own start script pip-installs packages before it starts
its server (`pip install quart aiohttp && python proxy.py`: it listens only once the install is done); a web app, a
gateway, a database or a dashboard gives no such sign in its manifest (on the labelled corpora such findings were
right 2 times in 13). Nor is a model server that loads no model
until a request names one (Ollama without a start-time pull, Triton in explicit model control, LocalAI started with no
model: GRPO503 leaves them alone too), or a notebook server (Jupyter, code-server) holding a GPU: they listen before any
model is loaded, and a readiness probe would not cover a load made on request. Ray pods are left out: KubeRay gives
their containers its own probes.

## Why is this bad?
A pod with no readiness probe is Ready as soon as its containers start, so the Service's endpoints include it while
it is still downloading and loading its weights, and keep it when it stops answering. A rolling update counts the
new pod available and stops the old one at once: clients see refused connections, 502s or hangs for as long as the
load takes, on every rollout.

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
Add a readinessProbe on the port the Service targets: the server's health path (`httpGet`), or a `tcpSocket` check
where it has none; and a startupProbe that allows for the load.
"""


def check(ctx) -> Iterator[Hit]:
    seen: set[tuple[int, str]] = set()
    for b in backends(ctx):
        if b.obj.kind != "Service":
            continue  # a head Service KubeRay creates: its head's readiness is KubeRay's
        for o, pod_path, pod in b.pods:
            if (id(o), pod_path) in seen or _governing(b, o) or _metrics_only(b, o, pod_path, pod):
                continue
            seen.add((id(o), pod_path))
            mains = _unprobed(o, pod_path, pod)
            if not mains:
                continue
            i, c = _serving(mains, b.ports)
            if any(is_model_server(m) or is_notebook(m) for _j, m in mains):
                continue
            if any(asked(m) for _j, m in mains):
                loading = "the model it holds an accelerator for has loaded (assumed: the pod serves a model)"
            elif (pulled := _model_pulled_at_start(pod, pod_path, mains)) is not None:
                loading = f"the model it downloads at start ({pulled}) has loaded"
            elif (installed := _installed_at_start(ctx, o, mains)) is not None:
                loading = f"its start script's pip install ({installed}) has finished and its server listens"
            else:
                continue
            yield Hit(f"{pod_path}.containers.{i}", f"{o.kind} {o.name}: Service {b.name} routes to it, and "
                      f"container {c.get('name', i)} has no readinessProbe; it gets requests as soon as it starts, "
                      f"before {loading}", obj=o)
    if ctx.of_kind("Service"):
        return
    # a set with no Service at all: the Service in front of a server that declares its port is applied apart
    for o, pod_path, pod in ctx.pod_templates():
        mains = _unprobed(o, pod_path, pod) if o.kind in SERVING_KINDS else []
        if not any(asked(c) for _i, c in mains) or any(is_model_server(c) or is_notebook(c) for _i, c in mains):
            continue  # no accelerator, a server that loads its model on request, a notebook: no load at start
        declared = [(i, c) for i, c in mains if any(isinstance(p, dict) and p.get("containerPort")
                                                    for p in c.get("ports") or [])]
        if declared:
            i, c = declared[0]
            yield Hit(f"{pod_path}.containers.{i}", f"{o.kind} {o.name}: container {c.get('name', i)} holds an "
                      "accelerator, declares a port and has no readinessProbe; a Service in front of it sends "
                      "requests as soon as it starts, before its model has loaded (assumed: a Service applied apart "
                      "from these files routes to it)", obj=o)


def _model_pulled_at_start(pod: dict, pod_path: str, mains: list[tuple[int, dict]]) -> str | None:
    """The model a regular container of the pod downloads from the Hub when it starts (`--model-id`, a model env,
    `snapshot_download`): without an accelerator, a sign that it loads something before it answers."""
    regular = {id(c) for _i, c in mains}
    return next((pulls[0].repo for _base, c, pulls, _cache, _env in downloads(pod, pod_path)
                 if id(c) in regular and pulls and pulls[0].repo != "a repository"), None)


# A container's own command or args (not a probe's, nor a postStart hook's, which the pod waits for before it is Ready).
ENTRYPOINT = re.compile(r"\.containers\.\d+\.(?:command|args)\.")


def _installed_at_start(ctx, o, mains: list[tuple[int, dict]]) -> str | None:
    """What a regular container's own start script pip-installs (`pip install quart aiohttp && python proxy.py`): it
    listens only once the install is done, seconds to minutes after the pod is Ready."""
    regular = {id(c) for _i, c in mains}
    for s in scripts(ctx):
        if s.obj is not o or id(s.container) not in regular or not ENTRYPOINT.search(s.path):
            continue
        for node in commands_in(s.root):
            words = pip_install_words(node)
            if words is not None:
                named = [w for w in words if not w.startswith("-")]
                return ", ".join(named[:3]) + (", ..." if len(named) > 3 else "") if named else "packages"
    return None


def _governing(b, o) -> bool:
    """The headless Service a StatefulSet names as its `serviceName`: it gives each pod a DNS name (a training
    run's rendezvous, a database's peers), it balances no requests."""
    spec = b.obj.obj.get("spec") if isinstance(b.obj.obj.get("spec"), dict) else {}
    owner = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    return o.kind == "StatefulSet" and spec.get("clusterIP") == "None" and owner.get("serviceName") == b.name


# Port names that mean "scrape me": Prometheus' own and the conventions of the charts that expose metrics apart.
METRICS_PORT = re.compile(r"^(?:http-|https-)?(?:metrics|prom|prometheus|monitoring|telemetry)$", re.IGNORECASE)


def _metrics_only(b, o, pod_path: str, pod: dict) -> bool:
    """Every port of the Service reaches a metrics endpoint (a port named so, on the Service or the container, or
    the one the pod's `prometheus.io/port` annotation names): Prometheus scrapes through it, no client's request
    does, and readiness gates no scrape."""
    annotations = pod_metadata(o.obj, pod_path).get("annotations")
    annotated = str(annotations.get("prometheus.io/port", "")) if isinstance(annotations, dict) else ""
    metrics = [p for _f, _i, c in containers(pod) for p in c.get("ports") or []
               if isinstance(p, dict) and METRICS_PORT.match(str(p.get("name", "")))]
    named = {str(p.get(key)) for p in metrics for key in ("containerPort", "name")}
    return bool(b.ports) and all(METRICS_PORT.match(p.name or "") or str(p.target) in named
                                 or (annotated and str(p.target) == annotated) for p in b.ports)


def _unprobed(o, pod_path: str, pod: dict) -> list[tuple[int, dict]]:
    """The regular containers of a long-running pod that has no readiness probe and runs no server GRPO503 reports (a
    server that loads no model until asked, Ollama's way, is this rule's), nothing that only sleeps (GRPO849's,
    GRPO854's) and no training launcher (its Service is a rendezvous, GRPO855's case); else []. A Ray pod has a
    probe whatever its manifest says: KubeRay gives its Ray container readiness and liveness probes of its own."""
    if runs_to_completion(o, pod_path, pod) or is_ray_pod(o, pod_path):
        return []
    mains = [(i, c) for field, i, c in containers(pod) if field == "containers"]
    if not mains or any(c.get("readinessProbe") or idles_only(c) or waits_after_setup(c) or training_launcher(c)
                        or (is_model_server(c) and not loads_no_model_at_start(c)) for _i, c in mains):
        return []
    return mains


def _serving(mains, ports) -> tuple[int, dict]:
    """The container that declares a port the Service targets (by number or name); else the first."""
    targets = {str(p.target) for p in ports}
    for i, c in mains:
        for p in c.get("ports") or []:
            if isinstance(p, dict) and (str(p.get("containerPort")) in targets or str(p.get("name")) in targets):
                return i, c
    return mains[0]
