"""GRPO876 url-port-not-served."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import mapping
from ._podsecurity import namespace_of

CODE = "GRPO876"
NAME = "url-port-not-served"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A container's URL reaches a Service of the files on a port the Service does not serve."
DOC = """## What it does
Reads the URLs in every container's env values, command and arguments (`http://`, `https://`, `grpc://`,
`ws://`, `wss://`) whose host names a Service of the files: a one-label host (`http://ollama:11434`), which
resolves in the pod's own namespace, or `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`. The URL's
port is the one it states, else its scheme's (80 for `http` and `ws`, 443 for `https` and `wss`; a `grpc://` URL
without a port is not judged). It is reported when that Service lists no such `port`. A headless Service
(`clusterIP: None`) and an `ExternalName` Service are left alone: their names resolve to the pods or to another
host, and the Service's ports do not decide what answers. A port written as a variable (`$(PORT)`) is not judged.

## Why is this bad?
A Service forwards only the ports it lists: a connection to the Service's address on any other port finds
nothing (kube-proxy programs rules for the listed ports alone), so the client is refused or times out. A URL
without a port goes to 80: `OLLAMA_BASE_URL: http://ollama` in front of a Service that lists 11434 reaches no
model server, and the UI shows no models with no error that names the cause.

## Example
```yaml
kind: Service
metadata: {name: ollama}
spec:
  ports: [{port: 11434}]
---
env:
  - {name: OLLAMA_BASE_URL, value: "http://ollama"}
```
Use instead:
```yaml
env:
  - {name: OLLAMA_BASE_URL, value: "http://ollama:11434"}
```

## Fix
Write the port the Service lists in the URL, or add the port to the Service.
"""

URL = re.compile(r"\b(https?|grpc|wss?)://([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)(?::([^/?#\s\"',;]*))?"
                 r"(?=[/?#\s\"',;]|$)")
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def _read(path: str) -> bool:
    """A container's env value, command or argument: where a program reads the address it calls."""
    parts = path.split(".")
    return "containers" in parts and ("command" in parts or "args" in parts
                                      or (parts[-1] == "value" and "env" in parts))


def _service(host: str, own_namespace: str, services: dict) -> tuple[object, str] | None:
    """The Service of the files a URL host names, with its namespace, or None."""
    labels = host.split(".")
    if len(labels) == 1:
        namespace = own_namespace
    elif len(labels) == 2 or labels[2] == "svc":
        namespace = labels[1]
    else:
        return None
    found = services.get((namespace, labels[0]))
    return (found, namespace) if found is not None else None


def _ports(svc) -> set[int] | None:
    """The ports a Service forwards, or None where its ports do not decide what answers."""
    spec = mapping(svc.obj.get("spec"))
    if spec.get("type") == "ExternalName" or spec.get("clusterIP") == "None":
        return None
    ports = spec.get("ports")
    listed = {p.get("port") for p in ports if isinstance(p, dict)} if isinstance(ports, list) else set()
    numbers = {p for p in listed if isinstance(p, int)} | {int(p) for p in listed if isinstance(p, str) and p.isdigit()}
    return numbers or None


def check(ctx) -> Iterator[Hit]:
    services = {(namespace_of(s, ctx.namespace), s.name): s for s in ctx.of_kind("Service") if s.name}
    if not services:
        return
    for o, pod_path, _pod in ctx.pod_templates():
        own = namespace_of(o, ctx.namespace)
        told: set[tuple[str, int]] = set()
        for path, text in ctx.strings_under(o, pod_path):
            if "://" not in text or not _read(path):
                continue
            for m in URL.finditer(text.lower()):
                scheme, host, port = m.group(1), m.group(2), m.group(3)
                if port is None or port == "":
                    number = DEFAULT_PORTS.get(scheme)
                elif port.isdigit():
                    number = int(port)
                else:
                    continue  # `$(PORT)`, `${PORT}`: a variable
                found = _service(host, own, services) if number is not None else None
                if found is None:
                    continue
                svc, namespace = found
                served = _ports(svc)
                if served is None or number in served or (host, number) in told:
                    continue
                told.add((host, number))
                how = f"port {number}" if port else f"port {number} ({scheme}'s default: the URL states none)"
                listed = ", ".join(str(p) for p in sorted(served))
                yield Hit(path, f"{o.kind} {o.name} calls {m.group(0)} on {how}, but Service {svc.name} in "
                          f"{namespace!r} serves only {listed}: the connection finds nothing", obj=o,
                          remediation=f"call {scheme}://{host}:{sorted(served)[0]}, or add port {number} to "
                          f"Service {svc.name}")
