"""GRPO505 not-ready-addresses."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import selector_matches
from ._serving import is_model_server

CODE = "GRPO505"
NAME = "not-ready-addresses"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A Service with `publishNotReadyAddresses: true` sends requests to model servers that have not loaded yet."
DOC = """## What it does
Finds Services with `spec.publishNotReadyAddresses: true` whose selector matches pods that run a model server
(as GRPO503 finds them).

## Why is this bad?
`publishNotReadyAddresses` puts every pod behind the Service whether or not it is Ready: the readiness probe no
longer keeps traffic away from a server that is still downloading or loading its model, or that has stopped
answering. It is meant for peer discovery (a StatefulSet's members finding each other before they are Ready),
not for the port clients send requests to.

## Example
```yaml
kind: Service
spec:
  selector: {app: vllm}
  publishNotReadyAddresses: true
```
Use instead:
```yaml
kind: Service
spec:
  selector: {app: vllm}
```

## Fix
Drop `publishNotReadyAddresses` from the Service clients use; where peers must find each other early, give them
a separate headless Service.
"""


def check(ctx) -> Iterator[Hit]:
    pods = ctx.pod_templates()
    for svc in ctx.of_kind("Service"):
        spec = svc.obj.get("spec") if isinstance(svc.obj.get("spec"), dict) else {}
        selector = spec.get("selector")
        if spec.get("publishNotReadyAddresses") is not True or not isinstance(selector, dict) or not selector:
            continue
        for o, pod_path, pod in pods:
            if _namespace(o) != _namespace(svc) or not selector_matches({"matchLabels": selector},
                                                                    ctx.pod_labels(o, pod_path)):
                continue
            servers = [c.get("name") for c in pod.get("containers") or [] if is_model_server(c)]
            if servers:
                yield Hit("spec.publishNotReadyAddresses", f"Service {svc.name}: publishNotReadyAddresses sends "
                          f"requests to {o.kind} {o.name}'s model server {servers[0]} before it is Ready (while it "
                          "loads, or after it stopped answering)", obj=svc)
                break


def _namespace(o) -> str:
    return str((o.obj.get("metadata") or {}).get("namespace") or "")
