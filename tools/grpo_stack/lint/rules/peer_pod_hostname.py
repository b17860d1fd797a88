"""GRPO863 peer-pod-hostname."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import argv_of, containers, literal_env
from ._podsecurity import namespace_of
from ._quantity import whole

CODE = "GRPO863"
NAME = "peer-pod-hostname"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A rendezvous address names a peer pod by a hostname no DNS record answers: the other ranks cannot reach "
           "rank 0.")
DOC = """## What it does
Reads the rendezvous address of every container of an Indexed Job (`completionMode: Indexed`) or a StatefulSet
with more than one pod: `MASTER_ADDR` in its env, and torchrun's `--master_addr`, `--master-addr`,
`--rdzv_endpoint` and `--rdzv-endpoint`. An address that is one of the workload's own pod hostnames
(`<name>-<index>`) is reported:
- bare (`ddp-train-0`): a pod's hostname is in its own `/etc/hosts` only; from other pods the cluster's DNS
  answers it only as `<hostname>.<subdomain>`, and only when a headless Service of that name selects the pods;
- qualified (`ddp-train-0.workers`) in an Indexed Job whose pod template sets no `subdomain`: no DNS record
  names the pod at all.

A Service in the set named like the address (one per pod) is taken as what resolves it.

An address that is the name of a bare Pod of the set (one with no `subdomain`), where no Service of that name is in
the files, is a warning naming the assumption that no other file creates one: a Pod's name is its hostname, which
only its own `/etc/hosts` knows.

## Why is this bad?
Every rank but rank 0 fails to resolve the address and `torch.distributed` gives up after its timeout (or, where
the launcher binds the address, rank 0 fails too), after the image pull and the GPU allocation; the Job retries
until its backoff limit.

## Example
```yaml
kind: Job
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      containers:
        - name: trainer
          env: [{name: MASTER_ADDR, value: ddp-train-0}]
```
Use instead:
```yaml
kind: Job
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      subdomain: ddp-train          # a headless Service (clusterIP: None) of this name selects the pods
      containers:
        - name: trainer
          env: [{name: MASTER_ADDR, value: ddp-train-0.ddp-train}]
```

## Fix
Give the pods a subdomain (an Indexed Job's `spec.template.spec.subdomain`; a StatefulSet's `serviceName`) with a
headless Service of that name selecting them, and address rank 0 as `<name>-0.<subdomain>`.
"""

ADDRESS_ENV = frozenset({"MASTER_ADDR"})
ADDRESS_FLAGS = frozenset({"--master_addr", "--master-addr", "--rdzv_endpoint", "--rdzv-endpoint"})


def check(ctx) -> Iterator[Hit]:
    services = {(namespace_of(s, ctx.namespace), s.name) for s in ctx.of_kind("Service")}
    yield from _bare_pod_names(ctx, services)
    for o, pod_path, pod in ctx.pod_templates():
        subdomain, pods = _pod_names(o, pod)
        if pods < 2 or pod.get("hostNetwork") is True:
            continue
        own = re.compile(rf"{re.escape(o.name)}-\d+")
        for field, i, c in containers(pod):
            for where, address in _addresses(c):
                host = _host(address)
                name, _, qualifier = host.partition(".")
                if not own.fullmatch(name) or (namespace_of(o, ctx.namespace), name) in services:
                    continue
                path = f"{pod_path}.{field}.{i}.{where}"
                if not qualifier:
                    fix = f"{name}.{subdomain}" if subdomain else f"{name}.<subdomain>, with a subdomain"
                    yield Hit(path, f"{o.kind} {o.name}: container {c.get('name', i)} reaches rank 0 at {host!r}, a "
                              "pod hostname no other pod can resolve (the cluster's DNS names pods only within "
                              f"their subdomain): write {fix}", obj=o)
                elif not subdomain and o.kind == "Job":
                    yield Hit(path, f"{o.kind} {o.name}: container {c.get('name', i)} reaches rank 0 at {host!r}, "
                              "but the pod template sets no subdomain, so no DNS record names its pods", obj=o)


def _bare_pod_names(ctx, services: set) -> Iterator[Hit]:
    """An address that is the name of a bare Pod of the set: a Pod's name is its hostname, which only its own
    /etc/hosts knows; no DNS record answers it unless a Service of that name exists."""
    bare = {(namespace_of(p, ctx.namespace), p.name) for p in ctx.of_kind("Pod")
            if not ((p.obj.get("spec") or {}).get("subdomain") if isinstance(p.obj.get("spec"), dict) else None)}
    if not bare:
        return
    for o, pod_path, pod in ctx.pod_templates():
        if pod.get("hostNetwork") is True:
            continue
        ns = namespace_of(o, ctx.namespace)
        for field, i, c in containers(pod):
            for where, address in _addresses(c):
                host = _host(address)
                if "." in host or (ns, host) not in bare or (ns, host) in services:
                    continue
                yield Hit(f"{pod_path}.{field}.{i}.{where}", f"{o.kind} {o.name}: container {c.get('name', i)} "
                          f"reaches rank 0 at {host!r}, the name of Pod {host}: a pod's name is a hostname only its "
                          "own /etc/hosts knows, and no Service of that name is in these files, so the other ranks "
                          "cannot resolve it (assumed: no file outside these creates a Service of that name)", obj=o,
                          severity=Severity.WARNING,
                          remediation=f"add a Service named {host} that selects Pod {host}'s labels on the "
                                      "rendezvous port, or run the ranks as an Indexed Job with a headless Service "
                                      "and address rank 0 as <name>-0.<subdomain>")


def _pod_names(o, pod: dict) -> tuple[str, int]:
    """(subdomain, pod count) of a workload whose pods get stable hostnames `<name>-<index>`; (.., 0) otherwise."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    if o.kind == "Job" and str(o.obj.get("apiVersion", "")).startswith("batch/") \
            and spec.get("completionMode") == "Indexed":
        count = max(whole(spec.get("completions"), 1), whole(spec.get("parallelism"), 1))
        return str(pod.get("subdomain") or ""), count
    if o.kind == "StatefulSet":
        return str(spec.get("serviceName") or ""), whole(spec.get("replicas"), 1)
    return "", 0


def _host(address: str) -> str:
    """The host of a rendezvous address (`host:port`, or a bare host)."""
    return address.rsplit(":", 1)[0] if address.count(":") == 1 else address


def _addresses(c: dict) -> Iterator[tuple[str, str]]:
    """(path under the container, address) for its rendezvous env and its launcher's address flags."""
    for k, e in enumerate(c.get("env") or []):
        if isinstance(e, dict) and e.get("name") in ADDRESS_ENV and e.get("name") in literal_env(c):
            yield f"env.{k}.value", str(e["value"])
    words = [part for w in argv_of(c) for part in str(w).split()]
    for j, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if flag in ADDRESS_FLAGS:
            value = value if eq else (words[j + 1] if j + 1 < len(words) else "")
            if value and "$" not in value:
                yield _argv_field(c), value


def _argv_field(c: dict) -> str:
    return "args" if c.get("args") else "command"
