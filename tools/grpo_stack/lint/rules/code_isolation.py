"""GRPO801 code-execution-isolation."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import config_map_data
from ._cache_paths import known_env
from ._objects import claim_volumes, containers, pod_component
from ._podsecurity import policies_selecting, policy_types
from .image_pinning import split as split_image

CODE = "GRPO801"
NAME = "code-execution-isolation"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A pod that runs model-written code has an API token, a writable checkpoint mount or no NetworkPolicy."
DOC = """## What it does
Finds the pods that execute model-written programs by what they run, whatever their labels:
- a code-sandbox image (SandboxFusion: `volcengine/sandbox-fusion`, `…/code-sandbox`, a mirror whose name
  contains `sandbox-fusion`), or SandboxFusion's server started from any image (`sandbox.server.server:app`);
- `HF_ALLOW_CODE_EVAL=1` in `env` (a literal, or from a ConfigMap of the set by `envFrom` or
  `configMapKeyRef`), or set inside a shell script (`export HF_ALLOW_CODE_EVAL=1`,
  `HF_ALLOW_CODE_EVAL=1 lm_eval …`);
- lm-eval run with `--confirm_run_unsafe_code` or with code tasks (`humaneval`, `mbpp`, `apps`, `ds1000`,
  `livecodebench`, `bigcodebench` and their variants, `instruct_humaneval` too), in argv or in a shell script,
  the task list also read through the container's variables (`--tasks "$TASKS"`);
- bigcode-evaluation-harness's `--allow_code_execution`, or EvalPlus (`evalplus.evaluate`);
- this chart's sandbox-fusion and lm-eval components.

Each such pod must set `automountServiceAccountToken: false`, must not mount a persistent or host volume
writable by any route — the whole volume, a `subPath` that names or contains a model or checkpoint tree
(`models`, `checkpoints`, `ckpt`, `weights`, …) or a parent of one; a writable `subPath` of its own for output
is allowed — and must be selected by a NetworkPolicy that restricts egress. A writable subPath is a parent of a
model or checkpoint tree when a path the pod names (command, args, env) runs through its mount point into such
a tree (`/workspace/models/…` under a writable `/workspace`), or when any pod of the set mounts a model or
checkpoint subPath of the same claim below it. A privileged code-executing
container is an error: a suppression with the reason is the only way to keep it.

## Why is this bad?
The predecessor's lm-eval driver ran generated programs with a default service-account token and the whole FSx
volume mounted read-write, where every checkpoint and result lived: strictly less isolated than the sandbox
deployed for the same purpose during training. Other projects label these pods their own way and switch code
execution on inside a shell command, so a label-based check misses exactly those. A privileged executor is a
node-level escape path.

## Example
```yaml
sandbox-fusion:
  privileged: true
```
Use instead:
```yaml
sandbox-fusion:
  privileged: false
```

## Fix
No service-account token, the shared volume read-only with a single output subPath, a NetworkPolicy that
restricts egress; privileged only on a dedicated node group, with the reason in a suppression.
"""

CODE_RUNNERS = {"sandbox-fusion", "lm-eval"}
# The image's repository name (its last path segment) names a code sandbox: `volcengine/sandbox-fusion`, a mirror
# such as `acme/rl-sandbox-fusion`, SandboxFusion's `…/code-sandbox`.
SANDBOX_IMAGE = re.compile(r"(^|/)[^/]*(sandbox[-_]?fusion|code[-_]sandbox)[^/]*$", re.IGNORECASE)
# SandboxFusion's server started from a project's own image (`uvicorn sandbox.server.server:app`).
SANDBOX_SERVER = re.compile(r"\bsandbox\.server\.server\b")
CODE_TASK = re.compile(r"(?<![a-z0-9])(humaneval|mbpp|apps|ds1000|livecodebench|bigcodebench)\w*", re.IGNORECASE)
VARIABLE = re.compile(r"\$\{([A-Za-z_]\w*)\}|\$\(([A-Za-z_]\w*)\)|\$([A-Za-z_]\w*)")
# Evaluation harnesses' own switches for running generated programs (bigcode-evaluation-harness, EvalPlus).
CODE_EXEC_FLAG = re.compile(r"--allow_code_execution\b|\bevalplus\.evaluate\b")
# Subpath segments that hold what a run trains or serves.
PROTECTED = re.compile(r"(^|/)(models?|checkpoints?|ckpts?|weights|hf_cache|huggingface)(/|$)", re.IGNORECASE)
EPHEMERAL = ("emptyDir", "configMap", "secret", "projected", "downwardAPI", "ephemeral")


def runs_model_code(ctx, o, pod_path, pod) -> str | None:
    """Why this pod runs model-written code, or None."""
    if o.is_test_hook:
        return None
    if pod_component(ctx, o, pod_path) in CODE_RUNNERS:
        return "its component runs model-written code"
    for _, _, c in containers(pod):
        if SANDBOX_IMAGE.search(split_image(str(c.get("image", "")))[0]):
            return f"image {c.get('image')} is a code sandbox"
        env = known_env(c, config_map_data(ctx))
        if _truthy(env.get("HF_ALLOW_CODE_EVAL")):
            return "env HF_ALLOW_CODE_EVAL enables code execution"
        argv = " ".join(str(a) for a in [*(c.get("command") or []), *(c.get("args") or [])])
        why = _argv_reason(_expanded(argv, env))
        if why:
            return why
    return None


def _expanded(argv: str, env: dict[str, str]) -> str:
    """`--tasks "$TASKS"` read with the container's own variables put in (unknown ones left as written)."""
    return VARIABLE.sub(lambda m: env.get(next(g for g in m.groups() if g), m.group(0)), argv)


def _argv_reason(argv: str) -> str | None:
    if SANDBOX_SERVER.search(argv):
        return "it starts the SandboxFusion server"
    m = CODE_EXEC_FLAG.search(argv)
    if m:
        return f"it runs generated code ({m.group(0)})"
    if re.search(r"\bHF_ALLOW_CODE_EVAL=[\"']?(1|true|yes)\b", argv, re.IGNORECASE):
        return "its command sets HF_ALLOW_CODE_EVAL"
    if "lm_eval" in argv or "lm-eval" in argv:
        if "--confirm_run_unsafe_code" in argv:
            return "it runs lm-eval with --confirm_run_unsafe_code"
        for tasks in re.findall(r"--tasks[= ]+(\S+)", argv):
            m = CODE_TASK.search(tasks)
            if m:
                return f"it runs the lm-eval code task {m.group(0)}"
    return None


def _truthy(value) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes")


ABSOLUTE_PATH = re.compile(r"/[\w.@+-]+(?:/[\w.@+-]+)*")


def _claims(pod) -> dict[str, str]:
    """Volume name -> the PersistentVolumeClaim it mounts."""
    return {str(v.get("name")): claim for _, v, claim in claim_volumes(pod)}


def _protected_subpaths(ctx) -> set[tuple[str, str]]:
    """(claim, subPath) of every mount in the set whose subPath is a model or checkpoint tree."""
    out = set()
    for _, _, pod in ctx.pod_templates():
        claims = _claims(pod)
        for _, _, c in containers(pod):
            for m in c.get("volumeMounts") or []:
                sub = str(m.get("subPath") or "").strip("/") if isinstance(m, dict) else ""
                if sub and m.get("name") in claims and PROTECTED.search(sub):
                    out.add((claims[m["name"]], sub))
    return out


def _named_paths(c) -> list[str]:
    """Absolute paths a container names in its command, args and env values."""
    texts = [str(a) for a in [*(c.get("command") or []), *(c.get("args") or [])]]
    texts += [str(e.get("value")) for e in c.get("env") or [] if isinstance(e, dict) and e.get("value")]
    return [p for t in texts for p in ABSOLUTE_PATH.findall(t)]


def _protected_below(m, sub: str, claim: str | None, paths: list[str], protected: set[tuple[str, str]]) -> str | None:
    """A model or checkpoint tree below a writable mount of an unprotected subPath, or None."""
    mount = str(m.get("mountPath") or "").rstrip("/")
    for p in paths:
        if mount and p.startswith(mount + "/") and PROTECTED.search(p[len(mount) + 1:]):
            return p
    for other_claim, other in sorted(protected):
        if other_claim == claim and (not sub or other.startswith(sub + "/")):
            return f"subPath {other} of {claim}"
    return None


def check(ctx) -> Iterator[Hit]:
    protected = _protected_subpaths(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        why = runs_model_code(ctx, o, pod_path, pod)
        if not why:
            continue
        label = f"{o.kind} {o.name} runs model-written code ({why})"
        if pod.get("automountServiceAccountToken") is not False:
            yield Hit(f"{pod_path}.automountServiceAccountToken", f"{label} with a service-account token", obj=o)
        durable = {v.get("name") for v in pod.get("volumes") or [] if isinstance(v, dict)
                   and not any(k in v for k in EPHEMERAL)}
        claims = _claims(pod)
        for field, i, c in containers(pod):
            paths = _named_paths(c)
            for j, m in enumerate(c.get("volumeMounts") or []):
                if not isinstance(m, dict) or m.get("name") not in durable or m.get("readOnly"):
                    continue
                sub = str(m.get("subPath") or m.get("subPathExpr") or "").strip("/")
                below = None
                if sub and sub != "." and not PROTECTED.search(sub):
                    below = _protected_below(m, sub, claims.get(str(m.get("name"))), paths, protected)
                    if below is None:
                        continue  # its own output directory
                what = f"subPath {sub!r}" if sub else "the whole volume"
                what += f", a parent of {below}," if below else ""
                yield Hit(f"{pod_path}.{field}.{i}.volumeMounts.{j}", f"{label} with {what} of {m['name']} "
                          f"mounted read-write at {m.get('mountPath')}", obj=o,
                          remediation="mount it readOnly and add one subPath mount for the output")
            if (c.get("securityContext") or {}).get("privileged"):
                key = "sandbox-fusion.privileged" if ctx.has_values else f"{pod_path}.{field}.{i}.securityContext"
                yield Hit(key, f"{label} in a privileged container (node-level escape path)",
                          obj=None if ctx.has_values else o,
                          remediation="set privileged: false; where SandboxFusion's cgroup isolation is required on a "
                          "dedicated node group, suppress this finding with the reason")
        # A policy in the pod's namespace; policyTypes as Kubernetes defaults them (Egress when egress rules exist).
        restricting = [p for p, spec in policies_selecting(ctx, o, pod_path) if "Egress" in policy_types(spec)]
        if not restricting:
            yield Hit(f"{pod_path}", f"{label} and no NetworkPolicy restricts its egress", obj=o,
                      remediation="add a NetworkPolicy selecting these pods with policyTypes [Ingress, Egress]")
