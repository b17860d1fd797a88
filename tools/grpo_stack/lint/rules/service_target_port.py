"""GRPO857 service-target-port."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers
from ._one_shot import listens_on_nothing
from ._services import backends
from ._serving import container_ports, listening_ports, loopback_only_port, may_open, stated_ports, tensorboard_2_stated

CODE = "GRPO857"
NAME = "service-target-port"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A Service targets a port that no container of the pods it selects declares."
DOC = """## What it does
Follows every Service written in the files (any type) to the pod templates its selector matches, in any
controller, and reads each of its ports' `targetPort` (the `port` when unset):
- **error**: a port *name* that no container of those pods declares: Kubernetes cannot resolve it, so the
  Service has no endpoint on that port;
- **warning**: a port *number* that no container of those pods lists while every one of them says where it
  listens (its `ports`, or its own `--port N` flag where it lists none); container ports are informational, so
  the process may still listen there, and the ports the programs it starts open by their own defaults count too
  (a model server's below, a `ray start`'s head and node ports): the finding names what is declared;
- **warning**: a port a model server's container declares (by number, or the name it declares) that the server
  does not open, by its own flags and its defaults (vLLM's OpenAI server and SGLang: `--port`, else 8000 and
  30000; Triton: `--http-port`, `--grpc-port`, `--metrics-port`, else 8000, 8001, 8002, less those it is told
  not to open), while no other container of the pods declares or states it. A container started through a shell
  list (`a & b`, `a; b`) may start other programs, so its ports are not judged;
- **warning**: a port where a container's TensorBoard listens on the loopback only (TensorBoard's default host is
  `localhost`: no `--bind_all`, no `--host` other than a loopback name), which no other container of the pods
  declares or states: the Service connects to the pod's address and is refused. That default is TensorBoard 2's
  (1.x listened on every interface, and an image of TensorFlow 1 is left alone): where the image does not state
  TensorFlow 2, the warning names that assumption.

- **warning**: a Service whose pods' containers listen on nothing: each declares no port, and its stated script
  runs its programs in the foreground (nothing in the background), none of them a server (a listen flag such as
  `--port`, a daemon kept in the foreground), and then waits (`sleep infinity` last): nothing answers on any port.
  A headless Service (`clusterIP: None`) is left alone: it names the pods in DNS (a training run's rendezvous)
  and balances no requests.

A Service whose pods are in no file here is not judged (they may be applied from another file), nor are the head
Services KubeRay creates itself.

## Why is this bad?
Traffic to the Service goes nowhere: clients get connection refused or time out, health checks of a load
balancer fail, and a Prometheus scrape of the port finds no target. Nothing fails at `kubectl apply`.

## Example
```yaml
kind: Service
spec:
  selector: {app: server}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
# the pods behind it
containers:
  - name: server
    args: ["--port", "8000"]
    ports: [{containerPort: 8000}]
```
Use instead:
```yaml
  ports: [{name: http, port: 8080, targetPort: 8000}]
```

## Fix
Target the port the server listens on, by the name or number its container declares.
"""


def check(ctx) -> Iterator[Hit]:
    for b in backends(ctx):
        if b.obj.kind != "Service" or not b.pods:
            continue
        names: set[str] = set()
        numbers: set[int] = set()
        heard: set[int] = set()
        known = True  # every container says where it listens (declared ports or its own --port flag)
        for _o, _path, pod in b.pods:
            for field, _i, c in containers(pod):
                if field != "containers":
                    continue
                declared = [p for p in c.get("ports") or [] if isinstance(p, dict)]
                names |= {str(p["name"]) for p in declared if p.get("name")}
                mine = container_ports(c)
                heard |= may_open(c)  # the programs' own ports: not declared, but answered
                known = known and bool(mine)
                numbers |= mine
        pods = ", ".join(sorted({f"{o.kind} {o.name}" for o, _path, _pod in b.pods}))
        regular = [c for _o, _path, pod in b.pods for field, _i, c in containers(pod) if field == "containers"]
        spec = b.obj.obj.get("spec") if isinstance(b.obj.obj.get("spec"), dict) else {}
        # a headless Service gives each pod a DNS name (a training run's rendezvous) and balances no requests
        if (b.ports and regular and not heard and spec.get("clusterIP") != "None"
                and all(listens_on_nothing(c) for c in regular)):
            yield Hit("spec.ports.0.targetPort", f"Service {b.name} targets {pods}, whose containers listen on "
                      "nothing: they declare no port, and their scripts run their programs in the foreground, none "
                      "a server, and then sleep: the Service has no endpoint that answers", obj=b.obj,
                      severity=Severity.WARNING, remediation="select the pods of the server, or start one there")
            continue
        for j, p in enumerate(b.ports):
            target, where = p.target, f"spec.ports.{j}.targetPort"
            if isinstance(target, str) and not target.isdigit() and target not in names:
                yield Hit(where, f"Service {b.name} targets port {target!r}, which no container of {pods} declares "
                          f"({_listed(names, numbers)}): the Service has no endpoint on it", obj=b.obj)
            elif known and numbers and str(target).isdigit() and int(target) not in numbers | heard:
                yield Hit(where, f"Service {b.name} targets port {target}, which no container of {pods} lists "
                          f"({_listed(names, numbers)})", obj=b.obj, severity=Severity.WARNING,
                          remediation="target the port the server listens on, and declare it")
            elif (loopback := _loopback_only(b.pods, target, names)) is not None:
                yield Hit(where, f"Service {b.name} targets port {loopback[1]}, where container {loopback[0]} of "
                          f"{pods} runs TensorBoard on localhost only (no --bind_all, no --host 0.0.0.0): "
                          "connections to the pod's address are refused" + ("" if loopback[2] else
                          " (assumed: TensorBoard 2.0 or later, which listens on localhost unless told otherwise; "
                          "1.x listened on every interface, and the image does not say which it runs)"),
                          obj=b.obj, severity=Severity.WARNING,
                          remediation="start TensorBoard with --bind_all (or --host 0.0.0.0)")
            else:
                deaf = _declared_not_served(b.pods, target)
                if deaf:
                    name, number, served = deaf
                    yield Hit(where, f"Service {b.name} targets port {number}, which container {name} of {pods} "
                              f"declares, but its server listens on {', '.join(map(str, sorted(served)))} (its "
                              "flags and the server's defaults): nothing answers there", obj=b.obj,
                              severity=Severity.WARNING,
                              remediation="target a port the server opens, or start it on the declared one")


def _loopback_only(pods, target, names: set[str]) -> tuple[str, int, bool] | None:
    """(container, port, whether its image states TensorBoard 2) when the target port (by number, or the name a
    container declares) is where a container's TensorBoard listens on the loopback only, and no other container of
    the pods declares or states it."""
    number = int(target) if str(target).isdigit() else None
    found = None
    for _o, _path, pod in pods:
        for field, i, c in containers(pod):
            if field != "containers":
                continue
            if number is None and isinstance(target, str) and target in names:
                number = next((p.get("containerPort") for p in c.get("ports") or []
                               if isinstance(p, dict) and p.get("name") == target), None)
            port = loopback_only_port(c)
            if port is not None and port == number:
                found = found or (str(c.get("name", i)), port, tensorboard_2_stated(c))
            elif number is not None and number in container_ports(c) | may_open(c):
                return None
    return found


def _declared_not_served(pods, target) -> tuple[str, int, set[int]] | None:
    """(container, port, the ports its server opens) when the target is a port that a model server's container
    declares, by number or name, while the server opens other ports (a declared port is informational), and no
    other container of the pods declares or states it; None otherwise."""
    found = None
    for _o, _path, pod in pods:
        for field, i, c in containers(pod):
            if field != "containers":
                continue
            declared = {p.get("name"): p.get("containerPort") for p in c.get("ports") or [] if isinstance(p, dict)}
            number = declared.get(target) if isinstance(target, str) and not target.isdigit() else (
                int(target) if str(target).isdigit() else None)
            if not isinstance(number, int):
                continue
            if number in stated_ports(c):
                return None
            served = listening_ports(c)
            if number in declared.values():
                if not served or number in served:
                    return None  # a container that declares it may listen there
                found = found or (str(c.get("name", i)), number, served)
            elif served and number in served:
                return None
    return found


def _listed(names: set[str], numbers: set[int]) -> str:
    shown = sorted(names) + [str(n) for n in sorted(numbers)]
    return "it declares " + ", ".join(shown) if shown else "it declares no port"
