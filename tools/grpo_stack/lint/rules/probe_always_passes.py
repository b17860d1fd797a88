"""GRPO844 probe-always-passes."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, curl_ignores_http_errors, parse, walk
from ._objects import containers

CODE = "GRPO844"
NAME = "probe-always-passes"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A readiness or startup probe checks nothing: `true`, `echo`, `exit 0`, `curl -s` without `-f`."
DOC = """## What it does
Reads every readiness and startup probe's `exec` command, in every pod template. A probe whose command cannot
fail — `true`, `:`, `echo …`, `printf …`, `exit 0`, a shell script made only of those, or a shell script whose
last statement rescues its check (`curl -s http://…/health || true`, `… || exit 0`) — is reported; so is a
probe whose deciding command is `curl` without `-f`/`--fail` (directly, or as a script's last statement): curl
exits 0 on an HTTP 500 or 503, so the probe passes as soon as anything answers.
Liveness probes are left alone (an always-passing liveness probe only disables restarts).

## Why is this bad?
Readiness is what Services, `kubectl wait` and other pods rely on. A probe that always passes marks a pod Ready
before it can serve: a trainer or an eval job that waited on it talks to nothing, and fails later, far from
the cause (the predecessor's utility pod was "Ready" while its pip install was still running or had failed).

## Example
```yaml
readinessProbe:
  exec:
    command: ["sh", "-c", "echo ready"]
```
Use instead:
```yaml
readinessProbe:
  exec:
    command: ["test", "-f", "/tmp/ready"]   # written by the entrypoint when set-up succeeded
```

## Fix
Probe what the pod provides: an HTTP health endpoint that exercises the service, or a file the entrypoint writes
only after set-up succeeded.
"""

NO_OP = frozenset({"true", ":", "echo", "printf"})


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            for probe in ("readinessProbe", "startupProbe"):
                probe_spec = c.get(probe) if isinstance(c.get(probe), dict) else {}
                argv = probe_spec.get("exec").get("command") if isinstance(probe_spec.get("exec"), dict) else None
                if isinstance(argv, list) and argv and _always_passes([str(a) for a in argv]):
                    yield Hit(f"{pod_path}.{field}.{i}.{probe}.exec.command",
                              f"{o.kind} {o.name}: the {probe} of container {c.get('name', i)} always passes "
                              f"({' '.join(str(a) for a in argv)[:80]})", obj=o)


def _always_passes(argv: list[str]) -> bool:
    name = argv[0].rsplit("/", 1)[-1]
    if name in NO_OP or (name == "curl" and curl_ignores_http_errors(argv[1:])):
        return True
    if name in ("sh", "bash", "ash", "dash") and len(argv) >= 3 and argv[-2].startswith("-") and "c" in argv[-2]:
        tree = parse(argv[-1])
        if tree.root_node.has_error:
            return False
        statements = [n for n in tree.root_node.named_children if n.type != "comment"]
        if statements and (_rescued(statements[-1]) or _lenient_curl(statements[-1])):
            return True
        cmds = list(commands_in(tree.root_node))
        if not cmds or any(n.type in ("pipeline", "list", "if_statement") for n in walk(tree.root_node)):
            return False
        return all(command_name(c) in NO_OP or (command_name(c) == "exit" and command_words(c) in ([], ["0"]))
                   for c in cmds)
    return False


def _no_op(node) -> bool:
    return node.type == "command" and (command_name(node) in NO_OP
                                       or (command_name(node) == "exit" and command_words(node) in ([], ["0"])))


def _lenient_curl(node) -> bool:
    """The script's last statement is (or ends in) a curl that succeeds on an HTTP error status."""
    while node.type == "list" and node.children[-2].type == "&&":
        node = node.children[-1]
    return (node.type == "command" and command_name(node) == "curl"
            and curl_ignores_http_errors(command_words(node)))


def _rescued(node) -> bool:
    """`CHECK || true`: the script's status is 0 whatever CHECK returns (the last statement decides it)."""
    return (node.type == "list" and len(node.children) >= 3 and node.children[-2].type == "||"
            and _no_op(node.children[-1]))
