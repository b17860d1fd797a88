"""GRPO854 probe-port."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._accelerators import asked as accelerators_asked
from ._objects import RUNTIME_TEMPLATE_KINDS, argv_of, containers, literal_env
from ._one_shot import idles_only
from ._serving import (
    TRITON_HTTP_FLAG,
    is_model_server,
    one_port_server,
    stated_ports,
    triton_http_port,
)

CODE = "GRPO854"
NAME = "probe-port"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A probe checks a port the container does not declare, or liveness repeats readiness on a container "
           "with no startup probe.")
DOC = """## What it does
Reads every container's `readinessProbe`, `livenessProbe` and `startupProbe` (`httpGet`, `tcpSocket`, `grpc`)
in every pod template, whatever the workload kind:
- **error**: the probe names a port by name (`port: http`) that none of the container's `ports` is called: the
  kubelet cannot resolve it and the probe fails every time;
- **error**: a vLLM or SGLang server, whose API, health and metrics all answer on the one port its `--port` names,
  is probed on another port number (one its container may even declare, named `metrics`);
- **error**: an HTTP probe of Triton's KServe v2 health (`/v2/health/ready`, `/v2/health/live`) on a port other
  than the one `tritonserver` serves HTTP on: its `--http-port`, else 8000 (8002 is its metrics port, where the
  health path is not served);
- **warning**: the probe checks a port number the container does not list while it lists others (ports are
  informational, so the process may still listen there: the finding names what is declared); a port the
  container's env gives a `*PORT*` variable (`DYN_SYSTEM_PORT: "19191"`) is where its program is told to listen,
  and is not reported;
- **error**: the container's command only waits (`sleep infinity`, `tail -f /dev/null`) and a probe checks a
  port no other container of the pod declares: nothing listens there and the probe never passes (a warning on a
  KServe runtime, whose command an InferenceService may replace);
- **warning**: a liveness or startup probe on a container that declares no port (one that only waits included)
  checks a port another container of the pod declares (a model-pulling sidecar probing the server beside it): the
  pod shares one network, so the probe measures the other container, but when it fails the kubelet restarts the
  one it sits on, and the server that stopped answering keeps running;
- **warning**: the liveness probe is the readiness probe (same handler, same timings) on a container that loads a
  model (a model server the rules recognise, or one given accelerators) with no startup probe: whatever keeps the
  pod from being ready (a model still loading) also kills it. A container that starts in seconds (a notebook, a
  UI) may share one probe.

## Why is this bad?
A probe on a name the container does not declare never passes: the pod is never Ready (readiness), is restarted
for ever (liveness) or never starts (startup); the kubelet's only trace is an event. A liveness probe that is
the readiness probe restarts a model server whose weights take longer to load than its failure budget, so it
never finishes loading.

## Example
```yaml
containers:
  - name: server
    ports: [{name: api, containerPort: 8000}]
    readinessProbe: {httpGet: {path: /health, port: http}}
    livenessProbe: {httpGet: {path: /health, port: http}}
```
Use instead:
```yaml
containers:
  - name: server
    ports: [{name: api, containerPort: 8000}]
    startupProbe: {httpGet: {path: /health, port: api}, failureThreshold: 120, periodSeconds: 10}
    readinessProbe: {httpGet: {path: /health, port: api}}
    livenessProbe: {httpGet: {path: /health, port: api}, failureThreshold: 6}
```

## Fix
Probe a port the container declares, by its name or number; give a slow-starting container a startup probe that
covers its load time, so liveness starts only once it has loaded.
"""

PROBES = ("readinessProbe", "livenessProbe", "startupProbe")
HANDLERS = ("httpGet", "tcpSocket", "grpc")


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        owners = _port_owners(pod)
        for field, i, c in containers(pod):
            at = f"{pod_path}.{field}.{i}"
            declared = [p for p in c.get("ports") or [] if isinstance(p, dict)]
            names = {str(p["name"]) for p in declared if p.get("name")}
            numbers = {p["containerPort"] for p in declared if isinstance(p.get("containerPort"), int)}
            idle = idles_only(c)
            triton = triton_http_port(c)
            for probe in PROBES:
                handler, port = _port(c.get(probe))
                if port is None:
                    continue
                where = f"{at}.{probe}.{handler}.port"
                who = f"{o.kind} {o.name}: the {probe} of container {c.get('name', i)}"
                # a port another container of the pod declares: the pod shares one network, so it answers there
                neighbour = (owners.get(_number(port)) if not declared and field == "containers" else None)
                neighbour = neighbour if neighbour != c.get("name") else None
                if neighbour:
                    if probe != "readinessProbe":
                        yield Hit(where, f"{who} checks port {_number(port)}, which container {neighbour} declares, "
                                  f"not this one: when the probe fails the kubelet restarts {c.get('name', i)}, and "
                                  f"{neighbour}, which stopped answering, keeps running", severity=Severity.WARNING,
                                  obj=o, remediation=f"move the probe to container {neighbour}")
                elif idle:
                    template = o.kind in RUNTIME_TEMPLATE_KINDS
                    yield Hit(where, f"{who} checks port {port}, but the container only waits (its command sleeps): "
                              "nothing listens there and the probe never passes"
                              + (f" (assumed: the resources that use this {o.kind} may replace its command)"
                                 if template else ""),
                              severity=Severity.WARNING if template else None, obj=o,
                              remediation="start the server in the container's command, or drop the probe")
                elif isinstance(port, str) and not port.isdigit() and port not in names:
                    yield Hit(where, f"{who} checks port {port!r}, which the container does not declare "
                              f"({_listed(names, numbers)}): the kubelet cannot resolve it and the probe always "
                              "fails", obj=o)
                elif one_port_server(c) and stated_ports(c) and _number(port) not in stated_ports(c) | {None}:
                    yield Hit(where, f"{who} checks port {_number(port)}, but the server listens only on "
                              f"{_listed_ports(stated_ports(c))} (its --port): nothing answers the probe there",
                              obj=o, remediation="probe the port the server's --port names")
                elif (handler == "httpGet" and triton is not None
                      and _resolved(port, declared) not in (None, triton)
                      and str(c[probe]["httpGet"].get("path", "")).startswith("/v2/")):
                    yield Hit(where, f"{who} asks {c[probe]['httpGet']['path']} on port {_resolved(port, declared)}, "
                              f"but tritonserver serves its HTTP API on {triton} ("
                              + ("its --http-port" if _http_flag(c) else "its default: the command sets no --http-port")
                              + "): the probe gets no health answer there (8002 is its metrics port)", obj=o,
                              remediation=f"probe port {triton}, or start tritonserver with --http-port")
                elif numbers and _number(port) is not None and _number(port) not in numbers | _env_ports(c):
                    yield Hit(where, f"{who} checks port {_number(port)}, which the container does not list "
                              f"({_listed(names, numbers)})", severity=Severity.WARNING, obj=o,
                              remediation="probe the port the server listens on, and declare it")
            if (isinstance(c.get("livenessProbe"), dict) and c.get("livenessProbe") == c.get("readinessProbe")
                    and not c.get("startupProbe") and _port(c["livenessProbe"])[0] is not None
                    and (is_model_server(c) or accelerators_asked(c))):
                yield Hit(f"{at}.livenessProbe", f"{o.kind} {o.name}: container {c.get('name', i)}'s liveness probe "
                          "is its readiness probe and it has no startup probe: what keeps it from being ready (a "
                          "model still loading) also restarts it", severity=Severity.WARNING, obj=o,
                          remediation="add a startupProbe that covers the load time, or give liveness a larger "
                                      "failure budget than readiness")


def _port_owners(pod: dict) -> dict[int, str]:
    """Each port number a regular container of the pod declares -> that container's name."""
    owners: dict[int, str] = {}
    for field, _i, c in containers(pod):
        if field != "containers":
            continue
        for p in c.get("ports") or []:
            if isinstance(p, dict) and isinstance(p.get("containerPort"), int) and isinstance(c.get("name"), str):
                owners.setdefault(p["containerPort"], c["name"])
    return owners


def _port(probe) -> tuple[str | None, object]:
    """(handler, port) of an httpGet / tcpSocket / grpc probe; (None, None) for exec probes or none."""
    if not isinstance(probe, dict):
        return None, None
    for handler in HANDLERS:
        spec = probe.get(handler)
        if isinstance(spec, dict) and isinstance(spec.get("port"), int | str) and not isinstance(spec["port"], bool):
            return handler, spec["port"]
    return None, None


def _resolved(port, declared: list[dict]) -> int | None:
    """A probe's port as a number: itself, or the containerPort of the container port it names."""
    if _number(port) is not None:
        return _number(port)
    return next((p["containerPort"] for p in declared if p.get("name") == port
                 and isinstance(p.get("containerPort"), int)), None)


def _http_flag(c: dict) -> bool:
    return any(TRITON_HTTP_FLAG.match(part) for w in argv_of(c) for part in w.split())


def _number(port) -> int | None:
    if isinstance(port, int):
        return port
    return int(port) if isinstance(port, str) and port.isdigit() else None


def _listed_ports(numbers: set[int]) -> str:
    return ", ".join(str(n) for n in sorted(numbers))


def _listed(names: set[str], numbers: set[int]) -> str:
    parts = sorted(names) + [str(n) for n in sorted(numbers)]
    return "it declares " + ", ".join(parts) if parts else "it declares no ports"


def _env_ports(c: dict) -> set[int]:
    """Port numbers the container's env gives a `*PORT*` variable (`DYN_SYSTEM_PORT=19191`): where its program is
    told to listen, though its `ports` do not list it."""
    return {int(value) for name, value in literal_env(c).items() if "PORT" in name and value.isdigit()}
