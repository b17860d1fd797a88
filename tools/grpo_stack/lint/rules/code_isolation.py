"""GRPO801 code-execution-isolation."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, pod_component, selector_matches

CODE = "GRPO801"
NAME = "code-execution-isolation"
SEVERITY = Severity.ERROR
SUMMARY = "A pod that runs model-written code has an API token, a writable checkpoint mount or no NetworkPolicy."
DOC = """## What it does
Finds the pods that execute model-written programs: the SandboxFusion pods and the lm-eval pods (and any pod
with `HF_ALLOW_CODE_EVAL=1`). Each must set `automountServiceAccountToken: false`, mount the shared volume only
read-only (one `subPath` mount for its own output is allowed), and be selected by a NetworkPolicy that
restricts egress. A privileged sandbox is a warning: allowed when asked for, never by default.

## Why is this bad?
The predecessor's lm-eval driver ran generated programs with a default service-account token and the whole FSx
volume mounted read-write, where every checkpoint and result lived: strictly less isolated than the sandbox
deployed for the same purpose during training. A privileged executor is a node-level escape path.

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
Keep the chart's defaults: no token, read-only storage with a single output subPath, the shipped
NetworkPolicy; turn `privileged` on only with the reason written next to it.
"""

CODE_RUNNERS = {"sandbox-fusion", "lm-eval"}


def _runs_model_code(ctx, o, pod_path, pod) -> bool:
    if o.is_test_hook:
        return False
    if pod_component(ctx, o, pod_path) in CODE_RUNNERS:
        return True
    return any(e.get("name") == "HF_ALLOW_CODE_EVAL" and str(e.get("value")) == "1"
               for _, _, c in containers(pod) for e in c.get("env") or [])


def check(ctx) -> Iterator[Hit]:
    policies = [((p.obj.get("spec") or {}), p) for p in ctx.of_kind("NetworkPolicy")]
    for o, pod_path, pod in ctx.pod_templates():
        if not _runs_model_code(ctx, o, pod_path, pod):
            continue
        label = f"{o.kind} {o.name} runs model-written code"
        if pod.get("automountServiceAccountToken") is not False:
            yield Hit(f"{pod_path}.automountServiceAccountToken", f"{label} with a service-account token", obj=o)
        pvc_volumes = {v["name"] for v in pod.get("volumes") or [] if "persistentVolumeClaim" in v}
        for field, i, c in containers(pod):
            for j, m in enumerate(c.get("volumeMounts") or []):
                if m.get("name") in pvc_volumes and not m.get("readOnly") and not m.get("subPath"):
                    yield Hit(f"{pod_path}.{field}.{i}.volumeMounts.{j}", f"{label} with shared volume "
                              f"{m['name']} mounted read-write at {m.get('mountPath')}", obj=o,
                              remediation="mount it readOnly and add one subPath mount for the output")
            if (c.get("securityContext") or {}).get("privileged"):
                key = "sandbox-fusion.privileged" if ctx.has_values else f"{pod_path}.{field}.{i}.securityContext"
                yield Hit(key, f"{label} in a privileged container (node-level escape path)",
                          severity=Severity.WARNING, obj=None if ctx.has_values else o,
                          remediation="set privileged: false unless SandboxFusion's cgroup isolation is required "
                          "and the node group is dedicated; document why")
        labels = ctx.pod_labels(o, pod_path)
        restricting = [p for spec, p in policies if selector_matches(spec.get("podSelector") or {}, labels)
                       and "Egress" in (spec.get("policyTypes") or [])]
        if not restricting:
            yield Hit(f"{pod_path}", f"{label} and no NetworkPolicy restricts its egress", obj=o,
                      remediation="add a NetworkPolicy selecting these pods with policyTypes [Ingress, Egress]")
