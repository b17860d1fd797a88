"""GRPO101 namespace-mismatch."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import walk_strings
from ..controllers import controller_services
from ..finding import Hit, Severity

CODE = "GRPO101"
NAME = "namespace-mismatch"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "An in-cluster URL or PVC reference points outside the release namespace or at nothing the release has."
DOC = """## What it does
Finds every in-cluster DNS name (`<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`, and `<svc>.<ns>` as the host
of a URL when `<svc>` is a Service the release defines) in the values
and in the rendered objects (env values, arguments, ConfigMap data), and every `claimName`. Each name must be in
the release namespace and name a Service the release renders (or the KubeRay head Service); each claim must be
the PVC declared in `global.storage.claimName`. In plain manifests (not rendered from values), a name in another
namespace is reported only when the manifests define a Service of that name themselves — the predecessor's bug —
since a shared service (monitoring, another team's gateway) legitimately lives elsewhere;
`kubernetes.default.svc` is the API server and is never reported.

## Why is this bad?
The predecessor hard-coded `sandbox-fusion.default.svc.cluster.local` while the sandbox was applied to whatever
namespace the kubectl context pointed at. Every reward call went to a name with no Service behind it, and the
preflight aborted the run against a URL that was never going to resolve.

## Example
```yaml
global:
  job:
    reward:
      kind: external
      url: http://reward.other-team.svc.cluster.local:8000/score
```
Use instead:
```yaml
global:
  components:
    rewardService: true
  job:
    reward:
      kind: service
```

## Fix
Use the component this release deploys (its URL is built in the release namespace), or an external URL that is
not an in-cluster name.
"""

DNS = re.compile(r"\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\b")


def check(ctx) -> Iterator[Hit]:
    services = {o.name for o in ctx.of_kind("Service")}
    services |= controller_services(ctx.objects)  # KubeRay head/serve, JobSet and LeaderWorkerSet Services
    from_values = set()
    if ctx.has_values:
        for path, text in ctx.value_strings():
            for hit in _check_text(ctx, text, services):
                from_values.add(text)
                yield Hit(path, hit)
    for o in ctx.objects:
        for path, text in walk_strings(o.obj):
            if any(v in text for v in from_values):
                continue  # already reported at the values key that carries it
            for hit in _check_text(ctx, text, services):
                yield Hit(path, f"{o.kind} {o.name}: {hit}", obj=o)
    claim = ctx.get("global.storage.claimName")
    if claim:
        for o, pod_path, pod in ctx.pod_templates():
            for i, vol in enumerate(pod.get("volumes") or []):
                name = (vol.get("persistentVolumeClaim") or {}).get("claimName")
                if name and name != claim:
                    yield Hit(f"{pod_path}.volumes.{i}.persistentVolumeClaim.claimName",
                              f"{o.kind} {o.name} mounts PVC {name!r}; the release declares {claim!r}", obj=o)


# `http://<svc>.<ns>:8080/…`: the short form resolves through the pod's DNS search list (`svc.cluster.local`). Only
# read in a URL whose host ends there, and only when <svc> is a Service of the set (else it is a public host).
SHORT = re.compile(r"://([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?=[:/?#\s\"']|$)")


def _names(text: str, services: set[str]):
    yield from DNS.finditer(text)
    yield from (m for m in SHORT.finditer(text) if m.group(1) in services)


def _check_text(ctx, text: str, services: set[str]) -> Iterator[str]:
    for m in _names(text, services):
        svc, ns = m.group(1), m.group(3)
        if (svc, ns) == ("kubernetes", "default"):
            continue  # the API server, reachable from every namespace
        if ns != ctx.namespace and not ctx.has_values and svc not in services:
            continue  # a shared service in its own namespace (monitoring, a team's gateway): not ours to judge
        if ns != ctx.namespace:
            yield (f"{m.group(0).removeprefix('://')} is in namespace {ns!r}, the release is in {ctx.namespace!r}; "
                   "a Service of this release would resolve as "
                   f"{svc}.{ctx.namespace}.svc.cluster.local")
        elif services and svc not in services:
            yield f"{m.group(0)}: the release renders no Service named {svc!r} (has: {', '.join(sorted(services))})"
