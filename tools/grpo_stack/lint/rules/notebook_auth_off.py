"""GRPO873 notebook-open-to-the-cluster."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers
from ._podsecurity import reached_from_other_namespaces
from ._serving import argv, command_programs, is_notebook, jupyter_token_off

CODE = "GRPO873"
NAME = "notebook-open-to-the-cluster"
SEVERITY = Severity.WARNING
CATEGORY = "security"
SUMMARY = ("A notebook or browser IDE runs with its authentication switched off on every interface, and no "
           "NetworkPolicy keeps other namespaces' pods from it: a shell for any pod of the cluster.")
DOC = """## What it does
Reads every container that runs a Jupyter server or code-server (by its command) in any workload. Reported when
its authentication is switched off and it listens on every interface:

- Jupyter with an empty token (`--ServerApp.token=''`, `--NotebookApp.token=''`, `--LabApp.token=''`,
  `--IdentityProvider.token=''`, or `JUPYTER_TOKEN` set to an empty literal) and no password
  (`--ServerApp.password` / `--NotebookApp.password` unset or empty), started on `--ip=0.0.0.0` (or `*`, `::`),
  or by the Jupyter images' start scripts (`start-notebook.sh`, `start-singleuser.sh`), which listen on every
  interface;
- code-server with `--auth none`, bound to every interface (`--bind-addr 0.0.0.0:PORT`, `--host 0.0.0.0`).

and no NetworkPolicy selecting the pod admits its port from nothing wider than pods of its own namespace (no
ingress policy at all, a rule with no `from`, or a `namespaceSelector` / `ipBlock` peer on that port), as GRPO817
judges the Ray dashboard. Whether a Service or route publishes it beyond the cluster is GRPO820's; this rule is
about every pod inside it. A server bound to localhost (Jupyter's own default, code-server's `127.0.0.1:8080`) is
left alone.

## Why is this bad?
A notebook or an IDE is a shell: any pod that reaches the port runs code as the notebook's user, with its
service-account token, its mounted volumes and credentials, and its GPUs. In a shared namespace or cluster that is
every other user's workload, and any compromised pod.

## Example
```yaml
containers:
  - name: lab
    command: ["jupyter", "lab", "--ip=0.0.0.0", "--ServerApp.token=''"]
```
Use instead:
```yaml
containers:
  - name: lab
    command: ["jupyter", "lab", "--ip=0.0.0.0"]
    env:
      - name: JUPYTER_TOKEN
        valueFrom: {secretKeyRef: {name: lab-token, key: token}}
```

## Fix
Keep the token (from a Secret) or a password, or bind to 127.0.0.1 and reach it with `kubectl port-forward`; and
admit the port only from the pods that need it with a NetworkPolicy.
"""

PASSWORD = re.compile(r"--(?:NotebookApp|ServerApp|IdentityProvider|LabApp)\.(?:hashed_)?password=(?!''|\"\"|\s|$)")
ALL_INTERFACES = re.compile(r"--(?:(?:NotebookApp|ServerApp)\.)?ip(?:=|\s+)['\"]?(?:0\.0\.0\.0|\*|::)['\"]?(?:\s|$)")
# The Jupyter images' start scripts listen on every interface (docker-stacks: `--ip=0.0.0.0` in their config).
START_SCRIPTS = frozenset({"start-notebook.sh", "start-notebook.py", "start-singleuser.sh", "jupyterhub-singleuser"})
CODE_SERVER_BIND = re.compile(r"--(?:bind-addr|host)(?:=|\s+)['\"]?(?:0\.0\.0\.0|\[::\]|::)(?::(\d+))?")
CODE_SERVER_NO_AUTH = re.compile(r"--auth(?:=|\s+)['\"]?none\b")
PORT = re.compile(r"--(?:(?:NotebookApp|ServerApp)\.)?port(?:=|\s+)['\"]?(\d+)")


def _open(c: dict) -> tuple[str, str, int] | None:
    """(what runs, how its authentication is off, its port) for a notebook or IDE open on every interface."""
    text, programs = argv(c), command_programs(c)
    if "code-server" in programs:
        bind = CODE_SERVER_BIND.search(text)
        if bind and CODE_SERVER_NO_AUTH.search(text):
            return "code-server", "--auth none", int(bind.group(1) or 8080)
        return None
    off = jupyter_token_off(c)
    if off is None or PASSWORD.search(text) or not (ALL_INTERFACES.search(text) or programs & START_SCRIPTS):
        return None
    port = PORT.search(text)
    return "a Jupyter server", off, int(port.group(1)) if port else 8888


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            if field != "containers" or not is_notebook(c):
                continue
            found = _open(c)
            reason = reached_from_other_namespaces(ctx, o, pod_path, found[2], set()) if found else None
            if found and reason:
                what, off, port = found
                yield Hit(f"{pod_path}.{field}.{i}", f"{o.kind} {o.name}: container {c.get('name', i)} runs {what} "
                          f"with its authentication off ({off}) on every interface, port {port}, and {reason}: any "
                          "pod that reaches it runs code with the pod's credentials and volumes", obj=o)
