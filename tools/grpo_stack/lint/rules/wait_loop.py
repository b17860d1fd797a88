"""GRPO841 wait-loop-cannot-fail."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import node_at
from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, curl_ignores_http_errors, scripts, text, walk
from ._objects import for_finite_work

CODE = "GRPO841"
NAME = "wait-loop-cannot-fail"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A shell loop that waits for something (sleep + retry) never fails when it gives up, waits forever, or "
           "polls with a probe that cannot fail (`curl -s` without `-f`).")
DOC = """## What it does
Finds polling loops in pod scripts — a `for`/`while`/`until` loop whose body sleeps and that stops on success
(`break`, or an `until`/`while` condition) — and requires a failing exit when the wait is over: an `exit N` (N ≠ 0),
`return N` or `false` inside the loop (typically on the last attempt), or right after it. A loop whose only exit is
success (`until curl …; do sleep 5; done`) waits forever and is reported too, except in a pod that runs until
stopped (a Deployment's, a Ray cluster's worker group). In an init container there the wait is the gate: the pod
shows `Init:0/1` until the dependency appears (KubeRay injects the same wait for the head into every worker), and
nothing downstream runs without it. In a sidecar there (a container that listens on nothing beside one that serves,
such as one that pulls a model into the server once it answers) a failing exit would only restart the sidecar into
the same wait, and the server's probes show whether what it waits on came. The pod's main container waiting forever
before it starts its work is still reported: the pod shows Running while nothing runs. A loop that records how the
wait ended in a variable the script reads afterwards (`result=pass; break` inside it, `result=${result:-fail}` or a
test of `$result` after it) acts on a timeout and is not reported. An MPIJob launcher that waits, through the
hostfile the MPI Operator mounts (`/etc/mpi/hostfile`), for the job's own workers is left alone too: the operator
starts them with it and reports a worker that fails. A keep-alive loop (`while true; do sleep 3600; done`, no
`break`) is not a wait and is left alone. The loop's probe — its `until`/`while` condition, or the command before
`&& break` / in `if …; then break` — must be able to fail: `curl` without `-f`/`--fail` exits 0 on an HTTP 404 or
503, so such a loop stops at the first connection, ready or not, however it is spelled (`curl -s`, `curl -sS -o
/dev/null`, `curl --silent`). On other projects' manifests that probe is a warning naming its assumption, that the
server answers an error status before it is ready (Triton's and TGI's readiness paths do; vLLM's API server listens
only once its engine is up, so there the first connection is the signal); in the chart's own pods it is an error. A
probe of Ollama's read endpoints (`/api/tags`, `/api/version`, `/api/ps`) is left alone: Ollama answers them as soon
as it listens and loads models on request, so a connection is the signal there too. A wait
in a pod with an `activeDeadlineSeconds`, or in a Job with one, is bounded by it (the pod or the Job fails at the
deadline) and is not reported as waiting forever.

## Why is this bad?
The predecessor's lm-eval Job polled vLLM 120 times at 15 s; when vLLM never came up, the loop fell out after
30 minutes and the script went straight on into lm_eval against a dead endpoint, failing much later with an
asyncio timeout instead of at the readiness gate with the URL in the message. A loop that waits forever never
fails the Job at all.

## Example
```yaml
args:
  - |
    for i in $(seq 1 120); do
      curl -sf "$URL/v1/models" && break
      sleep 15
    done
    lm_eval --model local-completions ...
```
Use instead:
```yaml
args:
  - |
    for i in $(seq 1 120); do
      curl -sf "$URL/v1/models" && break
      if [ "$i" -eq 120 ]; then echo "never ready: $URL" >&2; exit 1; fi
      sleep 15
    done
    lm_eval --model local-completions ...
```

## Fix
Exit non-zero, naming what never became ready, after the last attempt.
"""

# What a probe without --fail gets wrong depends on the server: on other projects' manifests, a warning that says so.
UNREADY_ERRORS = (" (assumed: the server answers an HTTP error status before it is ready, as Triton's and TGI's "
                  "readiness paths do; one that listens only once ready, as vLLM's API server does, makes the first "
                  "connection the right signal)")
LOOPS = ("for_statement", "c_style_for_statement", "while_statement", "until_statement")
ALWAYS_TRUE = ("true", ":")


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        for loop in (n for n in walk(s.root) if n.type in LOOPS):
            body = loop.child_by_field_name("body")
            if body is None or not any(command_name(c) == "sleep" for c in commands_in(body)):
                continue
            breaks = any(n.type == "break" or command_name(n) == "break" for n in walk(body))
            conditional = loop.type in ("while_statement", "until_statement") and not _always_true(loop)
            if not breaks and not conditional:
                continue  # keep-alive, not a wait
            for probe in _probes(loop, body):
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: the wait loop at script line {s.line_of(loop)} of "
                          f"{s.where} polls with `{' '.join(text(probe).split())[:60]}`, which succeeds on an HTTP "
                          "error status; add -f (--fail)" + ("" if ctx.has_values else UNREADY_ERRORS),
                          obj=s.obj, severity=None if ctx.has_values else Severity.WARNING)
            if _fails(body) or _fails_after(loop) or _records_outcome(loop, body):
                continue
            unbounded = conditional and not breaks or (loop.type == "while_statement" and _always_true(loop))
            if unbounded and (_gates_a_service(s) or _awaits_own_workers(s, loop) or _deadline_bounds(s)):
                continue
            what = ("waits forever when the awaited thing never comes" if unbounded
                    else "carries on as if ready after its last attempt")
            yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: the wait loop at script line {s.line_of(loop)} of "
                      f"{s.where} {what}; exit non-zero when it gives up", obj=s.obj)


def _container_of(s) -> tuple[str, str, str] | None:
    """(".containers." or ".initContainers.", the pod spec's path, the rest after it) of a container's script;
    None for a script that is no container's (a Ray entrypoint, a ConfigMap's)."""
    field = next((f for f in (".initContainers.", ".containers.") if f in s.path), None)
    if field is None:
        return None
    pod_path, rest = s.path.split(field, 1)
    return field, pod_path, rest


def _deadline_bounds(s) -> bool:
    """The pod's `activeDeadlineSeconds`, or its Job's (a CronJob's job template's), ends a wait that does not:
    the pod or the Job fails with DeadlineExceeded, which is the failing exit the loop lacks."""
    where = _container_of(s)
    if where is None:
        return False
    pod_path = where[1]
    owner_path = pod_path[: -len(".template.spec")] if pod_path.endswith(".template.spec") else None
    return any(isinstance(node, dict) and isinstance(node.get("activeDeadlineSeconds"), int)
               and not isinstance(node.get("activeDeadlineSeconds"), bool)
               for node in (node_at(s.obj.obj, pod_path), node_at(s.obj.obj, owner_path) if owner_path else None))


def _gates_a_service(s) -> bool:
    """A container of a pod that runs until stopped (a Deployment's, a Ray cluster's group): waiting for ever is
    what it is for. An init container's pod stays `Init:0/1` in plain sight and starts once the dependency appears
    (KubeRay injects such a wait for the head into every worker); a sidecar that gave up would be restarted into
    the same wait. Only a pod meant to finish needs its wait to fail."""
    where = _container_of(s)
    if where is None:
        return False
    field, pod_path, rest = where
    pod = node_at(s.obj.obj, pod_path)
    if not isinstance(pod, dict) or for_finite_work(s.obj, pod_path, pod):
        return False
    return field == ".initContainers." or _sidecar(pod, rest.split(".", 1)[0])


# The hostfile the MPI Operator mounts into an MPIJob's launcher, listing the job's own workers (v2beta1: /etc/mpi,
# also named by OMPI_MCA_orte_default_hostfile).
MPI_HOSTFILE = re.compile(r"/etc/mpi/hostfile|\$\{?OMPI_MCA_orte_default_hostfile\b")


def _awaits_own_workers(s, loop) -> bool:
    """An MPIJob launcher waiting, by the operator's hostfile, for the workers the operator starts with it: they come
    or the job makes no progress either way, and the operator, not the launcher, is what reports a failed worker."""
    return s.obj.kind == "MPIJob" and ".Launcher." in s.path and bool(MPI_HOSTFILE.search(text(loop)))


def _sidecar(pod: dict, index: str) -> bool:
    """The container at index listens on nothing and another container of the pod serves (declares a port): the
    server's own probes show whether what the sidecar waits on came."""
    regular = pod.get("containers") if isinstance(pod.get("containers"), list) else []
    if not index.isdigit() or int(index) >= len(regular):
        return False
    return not _serves(regular[int(index)]) and any(_serves(c) for j, c in enumerate(regular) if j != int(index))


def _serves(container) -> bool:
    return isinstance(container, dict) and bool(container.get("ports"))


def _probes(loop, body):
    """The curl commands that decide when the loop stops, where curl exits 0 on an HTTP error."""
    deciding = []
    if loop.type in ("while_statement", "until_statement") and not _always_true(loop):
        deciding += loop.children_by_field_name("condition")
    for n in walk(body):
        if n.type == "list" and len(n.children) >= 3 and n.children[1].type == "&&" and _is_break(n.children[-1]):
            deciding.append(n.children[0])
        elif n.type == "if_statement" and any(_is_break(c) for c in walk(n) if c is not n):
            deciding += n.children_by_field_name("condition")
    for part in deciding:
        for c in commands_in(part):
            words = command_words(c)
            if (command_name(c) == "curl" and _last_in_pipeline(c) and curl_ignores_http_errors(words)
                    and not any(_answers_once_listening(w) for w in words)):
                yield c


# Ollama's read endpoints (server/routes.go: GET /api/tags, /api/version, /api/ps) answer 200 as soon as the server
# listens; it loads models on request, so it has no phase that answers an error status before it is ready.
LISTENING_IS_READY = re.compile(r"^\S*://[^/\s]+/api/(?:tags|version|ps)/?$")


def _answers_once_listening(word: str) -> bool:
    return bool(LISTENING_IS_READY.match(word.strip("'\"")))


def _is_break(node) -> bool:
    return node.type == "break" or command_name(node) == "break" or any(
        c.type == "break" or command_name(c) == "break" for c in walk(node))


def _last_in_pipeline(node) -> bool:
    """curl's status decides only when nothing after it in a pipeline checks its output (`curl -s … | grep`)."""
    parent = node.parent
    return parent is None or parent.type != "pipeline" or parent.named_children[-1] == node


def _always_true(loop) -> bool:
    cond = loop.child_by_field_name("condition")
    return cond is not None and text(cond).strip().rstrip(";").strip() in ALWAYS_TRUE


def _fails(node) -> bool:
    """An `exit N` / `return N` (N != 0, or a variable) or a `false` somewhere under `node`."""
    for c in commands_in(node):
        name = command_name(c)
        if name == "false":
            return True
        if name in ("exit", "return"):
            words = command_words(c)
            if not words or words[0] not in ("0",):
                return True
    return False


def _records_outcome(loop, body) -> bool:
    """The loop records how the wait ended in a variable the script reads afterwards (`result=pass; break` inside it,
    `result=${result:-fail}` or `if [ "$result" = pass ]` after it): the script acts on a timeout, it does not carry
    on as if ready."""
    inside = {text(n.child_by_field_name("name")) for n in walk(body) if n.type == "variable_assignment"}
    after, node = [], loop.next_named_sibling
    while node is not None:
        after.append(text(node))
        node = node.next_named_sibling
    rest = "\n".join(after)
    return any(re.search(_decided_by(name), rest) for name in inside if name)


def _decided_by(name: str) -> str:
    """Where a later statement decides on the variable: a test of it (`[ "$x" = ok ]`, `[[ -z $x ]]`, `case "$x"`)
    or a default for the unset case (`${x:-fail}`); a mere echo of it decides nothing."""
    var = rf"\$\{{?{re.escape(name)}\b"
    return rf"\[\[?[^\]\n]*{var}|\bcase\s+\"?{var}|\$\{{{re.escape(name)}:?[-=]"


def _fails_after(loop) -> bool:
    nxt = loop.next_named_sibling
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    return nxt is not None and _fails(nxt)
