"""GRPO856 server-without-requests."""

from __future__ import annotations

from collections.abc import Iterator

from ...apivalidation.podspecs import node_at
from ..finding import Hit, Severity
from ._objects import RUNTIME_TEMPLATE_KINDS, containers, inline_containers, runs_to_completion
from ._services import backends

CODE = "GRPO856"
NAME = "server-without-requests"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = "A server container (it declares ports or probes) requests neither CPU nor memory."
DOC = """## What it does
For every long-running pod template (any workload but a Kubernetes Job's or CronJob's, a pod under restartPolicy
Never or OnFailure, or a training job's replica whose replica spec restarts it only on failure; custom resources
found by shape included), reads each container that serves — it declares `ports`, or has a readiness, liveness or
startup probe, or it is the first container of pods a Service in the files selects — and reports one that requests
neither CPU nor memory: no `resources.requests` for either, and no `resources.limits` for either (a limit without a
request is the request). A container that requests memory but sets no limit is not reported: it has a request.
Sidecars without ports or probes are left alone. On a KServe runtime's container (`ServingRuntime`,
`ClusterServingRuntime`) KServe merges the resources of the InferenceService that uses the runtime into its
container: with an InferenceService of the files that runs on it (by `predictor.model.runtime`, or a model format
the runtime selects automatically), the runtime is reported only if that states neither either; with none, the
finding names the assumption that the InferenceServices applied elsewhere state none. A
custom resource that describes its server's container inline (an `image` and `resources` under its spec, outside any
pod template, as NVIDIA's NIMService does) is read the same way when it declares a port or an `expose` section.

## Why is this bad?
A container with no requests is scheduled as if it needed nothing: the scheduler packs it onto a node that has
no room for it, and under memory pressure the kubelet evicts it before every pod that asked for what it uses
(a pod whose containers request nothing is `BestEffort`). For a model server or a UI that is an outage with no
error of its own, often in the middle of a run.

## Example
```yaml
containers:
  - name: ui
    image: registry.example/ui:2.1.0
    ports: [{containerPort: 8080}]
```
Use instead:
```yaml
containers:
  - name: ui
    image: registry.example/ui:2.1.0
    ports: [{containerPort: 8080}]
    resources:
      requests: {cpu: 500m, memory: 1Gi}
```

## Fix
Request the CPU and memory the server uses at its steady state (`kubectl top pod` on a running one).
"""

PROBES = ("readinessProbe", "livenessProbe", "startupProbe")


def check(ctx) -> Iterator[Hit]:
    fronted = {(id(o), path) for b in backends(ctx) if b.obj.kind == "Service" for o, path, _pod in b.pods}
    for o, pod_path, pod in ctx.pod_templates():
        if runs_to_completion(o, pod_path, pod):
            continue
        template = o.kind in RUNTIME_TEMPLATE_KINDS  # the InferenceService's resources are merged into it
        # KServe fills a runtime container's resources from the InferenceService that runs on it: with one in the
        # set, the runtime is judged through it; with none, the finding names that assumption
        users = _users_resources(ctx, o) if template else []
        if users and all({"cpu", "memory"} & _stated(r) for r in users):
            continue
        behind_service = (id(o), pod_path) in fronted
        first = True
        for field, i, c in containers(pod):
            serves = c.get("ports") or any(isinstance(c.get(p), dict) for p in PROBES) or (behind_service and first)
            first = first and field != "containers"
            if field != "containers" or not serves:
                continue
            resources = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            if not {"cpu", "memory"} & _stated(resources):
                yield Hit(f"{pod_path}.{field}.{i}" + (".resources" if "resources" in c else ""),
                          f"{o.kind} {o.name}: container {c.get('name', i)} serves (ports or probes) but requests "
                          "neither CPU nor memory: it is scheduled as if it needed nothing and evicted first"
                          + ((" (an InferenceService of the files that runs on this runtime states none either; "
                              "KServe merges its predictor's resources into the runtime's container)" if users else
                              " (assumed: the InferenceServices that use this runtime set none either; KServe merges "
                              "theirs into it)") if template else ""), obj=o)
    for o in ctx.objects:
        for path, inline, serves in inline_containers(o):
            if serves and not {"cpu", "memory"} & _stated(inline["resources"]):
                yield Hit(f"{path}.resources", f"{o.kind} {o.name}: the server its operator builds from {path} "
                          "(image and resources) requests neither CPU nor memory: it is scheduled as if it needed "
                          "nothing and evicted first", obj=o)


def _users_resources(ctx, runtime) -> list[dict]:
    """The predictor resources of each InferenceService of the set that runs on `runtime`: by name
    (`predictor.model.runtime`), or by a model format the runtime selects automatically."""
    spec = runtime.obj.get("spec") if isinstance(runtime.obj.get("spec"), dict) else {}
    auto = {str(f.get("name")) for f in spec.get("supportedModelFormats") or []
            if isinstance(f, dict) and f.get("autoSelect")}
    out = []
    for isvc in ctx.of_kind("InferenceService"):
        predictor = node_at(isvc.obj, "spec.predictor")
        model = predictor.get("model") if isinstance(predictor, dict) else None
        if not isinstance(model, dict):
            continue
        fmt = model.get("modelFormat") if isinstance(model.get("modelFormat"), dict) else {}
        named = model.get("runtime")
        if named == runtime.name or (not named and str(fmt.get("name")) in auto):
            out.append(model.get("resources") if isinstance(model.get("resources"), dict) else {})
    return out


def _stated(resources: dict) -> set:
    """The resources named in requests or limits (a limit without a request is the request)."""
    return {k for part in ("requests", "limits") if isinstance(resources.get(part), dict) for k in resources[part]}
