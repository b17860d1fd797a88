"""Every cross-component call of a rendered release, derived from the release itself.

Two sources, checked against each other by tests/wires/test_call_inventory.py:
- URL calls: each URL (or bare `host:port`) in a container's env values, command or args, and in the command and
  runtime env the builder makes from the rendered job.json (what the trainer is handed), whose host names a
  Service of the release; any other URL is a call leaving the release.
- Flows: each flow of the release's one flow list (the default-deny policy's `grpo-stack.io/flows` annotation,
  from which every NetworkPolicy is rendered).
A caller is named as the flows name it: a workload's `app.kubernetes.io/component`, `ray` for the RayCluster's
pods; the trainer on the Ray pods is `ray:<framework>`, since verl and miles are different callers of one URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from grpo_stack.job import build
from grpo_stack.render import Rendered

FLOWS_ANNOTATION = "grpo-stack.io/flows"
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>\\,]+", re.IGNORECASE)
POD_OWNERS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "Pod", "RayCluster", "RayJob")


@dataclass(frozen=True)
class Call:
    caller: str  # flows' name of the calling pods; ray:<framework> for the trainer
    callee: str  # the called Service's component, or "outside"
    path: str  # the URL path ("" for a bare host:port); for a call leaving the release, the URL itself
    via: str  # where the URL was found, e.g. "Deployment grpo-reward-service container x env REWARD_SANDBOX_URL"
    field: str  # the env var, the command's flag or Hydra key, or command/args, that carries it
    url: str

    @property
    def key(self) -> tuple[str, str, str]:
        return self.caller, self.callee, self.path


@dataclass(frozen=True)
class Flow:
    source: str
    target: str
    ports: tuple[int, ...]
    why: str


def services(rendered: Rendered) -> dict[str, str]:
    """Service name -> its component."""
    return {o.name: o.obj["metadata"]["labels"]["app.kubernetes.io/component"] for o in rendered.of_kind("Service")}


def framework(rendered: Rendered) -> str | None:
    spec = job_spec(rendered)
    return spec["job"]["framework"] if spec else None


def job_spec(rendered: Rendered) -> dict | None:
    for o in rendered.of_kind("ConfigMap"):
        if "job.json" in (o.obj.get("data") or {}):
            return json.loads(o.obj["data"]["job.json"])
    return None


def _pod_specs(o) -> Iterator[dict]:
    spec = o.obj.get("spec") or {}
    if o.kind == "Pod":
        yield spec
    elif o.kind in ("RayCluster", "RayJob"):  # job mode: the RayJob carries the one cluster spec
        cluster = spec["rayClusterSpec"] if o.kind == "RayJob" else spec
        for group in [cluster["headGroupSpec"], *cluster.get("workerGroupSpecs", [])]:
            yield group["template"]["spec"]
    else:
        yield (spec.get("template") or {}).get("spec") or {}


def caller_of(o, frame: str | None) -> str:
    if o.kind in ("RayCluster", "RayJob"):
        return f"ray:{frame}" if frame else "ray"
    return o.obj["metadata"]["labels"]["app.kubernetes.io/component"]


def _container_strings(o) -> Iterator[tuple[str, str, str]]:
    """(where, field, text) for each env value, command and arg of each container of a workload."""
    for pod in _pod_specs(o):
        for c in [*pod.get("initContainers", []), *pod.get("containers", [])]:
            for e in c.get("env") or []:
                if isinstance(e.get("value"), str):
                    yield f"{o.kind} {o.name} container {c['name']} env {e['name']}", e["name"], e["value"]
            for field in ("command", "args"):
                for i, text in enumerate(c.get(field) or []):
                    yield f"{o.kind} {o.name} container {c['name']} {field}[{i}]", field, str(text)


def _trainer_strings(rendered: Rendered) -> Iterator[tuple[str, str, str]]:
    """What the builder hands the trainer from job.json: its command (each token with its flag or Hydra key)
    and its runtime env."""
    spec = job_spec(rendered)
    if spec is None:
        return
    built = build(spec)
    argv = built.argv()
    for i, token in enumerate(argv):
        key, _, _ = token.partition("=")
        field = key if "=" in token and not token.startswith("-") else (argv[i - 1] if i else "")
        yield f"job.json -> {built.framework} command argv[{i}]", field, token
    for name, value in built.env:
        yield f"job.json -> {built.framework} runtime env {name}", name, value


def _service_of(host: str, names: dict[str, str], namespace: str) -> str | None:
    for name, component in names.items():
        if host == name or host in (f"{name}.{namespace}", f"{name}.{namespace}.svc",
                                    f"{name}.{namespace}.svc.cluster.local"):
            return component
    return None


def calls_in(text: str, where: str, field: str, caller: str, names: dict[str, str],
             namespace: str) -> Iterator[Call]:
    for match in URL.finditer(text):
        url = match.group(0).rstrip(".;)")
        parts = urlsplit(url)
        callee = _service_of(parts.hostname or "", names, namespace)
        if callee is None:
            yield Call(caller, "outside", url, where, field, url)
        else:
            yield Call(caller, callee, parts.path or "/", where, field, url)
    without_urls = URL.sub(" ", text)
    for name, component in names.items():
        host = rf"{re.escape(name)}(?:\.{re.escape(namespace)}(?:\.svc(?:\.cluster\.local)?)?)?"
        for match in re.finditer(rf"(?<![\w./-]){host}:\d+", without_urls):
            yield Call(caller, component, "", where, field, match.group(0))


def url_calls(rendered: Rendered, namespace: str) -> set[Call]:
    names, frame = services(rendered), framework(rendered)
    found: set[Call] = set()
    for o in rendered.objects:
        if o.kind in POD_OWNERS:
            caller = caller_of(o, frame)
            for where, field, text in _container_strings(o):
                found.update(calls_in(text, where, field, caller, names, namespace))
    for where, field, text in _trainer_strings(rendered):
        found.update(calls_in(text, where, field, f"ray:{frame}", names, namespace))
    return found


def job_spec_urls(rendered: Rendered) -> dict[str, str]:
    """job.json's own URLs: dotted key path -> URL (to check the builder hands each on, or why not)."""
    out: dict[str, str] = {}

    def walk(node, path: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")
        elif isinstance(node, str) and URL.fullmatch(node):
            out[path] = node

    walk(job_spec(rendered) or {}, "")
    return out


def flows(rendered: Rendered) -> list[Flow]:
    (deny,) = [o.obj for o in rendered.of_kind("NetworkPolicy") if FLOWS_ANNOTATION in
               (o.obj["metadata"].get("annotations") or {})]
    return [Flow(f["from"], f["to"], tuple(int(p["port"]) for p in f["ports"]), f["why"])
            for f in json.loads(deny["metadata"]["annotations"][FLOWS_ANNOTATION])]
