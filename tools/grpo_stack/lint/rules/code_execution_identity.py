"""GRPO821 code-execution-identity."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import values_section
from ._rbac import pod_account
from .code_isolation import runs_model_code

CODE = "GRPO821"
NAME = "code-execution-identity"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A pod that runs model-written code runs under a named service account (an IRSA / Pod Identity role)."
DOC = """## What it does
Reports every pod that runs model-written code (the pods GRPO801 finds by what they run: a SandboxFusion image
or server, `HF_ALLOW_CODE_EVAL`, lm-eval code tasks or `--confirm_run_unsafe_code`, bigcode-evaluation-harness,
EvalPlus, this chart's sandbox-fusion and lm-eval) whose `serviceAccountName` (or `serviceAccount`) names an
account other than `default`. In a values file that is `sandbox-fusion.pod.serviceAccountName` or
`lm-eval.pod.serviceAccountName`. The reward service is not such a pod: it sends code to the sandbox and runs
none itself.

## Why is this bad?
A named service account is how a pod gets an identity: IRSA's webhook (`eks.amazonaws.com/role-arn` on the
account) and EKS Pod Identity (an association for the account) inject AWS credentials into every pod that runs
as it, and RBAC bindings follow the account too. A generated program reads them as easily as the process that
started it does (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_CONTAINER_CREDENTIALS_FULL_URI`) and acts with the role's
permissions, whatever the NetworkPolicy allows it to reach from there.

## Example
```yaml
sandbox-fusion:
  pod:
    serviceAccountName: s3-reader
```
Use instead:
```yaml
sandbox-fusion:
  pod:
    serviceAccountName: ""
```

## Fix
Run code-executing pods without an identity: leave `serviceAccountName` empty, and give the identity to the pod
that needs AWS access (the Ray pods: `raycluster.head.pod` / `raycluster.worker.pod`, or fsx-utils).
"""


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        account = pod_account(pod)
        if account == "default":
            continue
        why = runs_model_code(ctx, o, pod_path, pod)
        if not why:
            continue
        message = (f"{o.kind} {o.name} runs model-written code ({why}) as service account {account}: its IAM role "
                   "or RBAC permissions are the generated programs' too")
        section = values_section(ctx, o, pod_path)
        if section and ctx.get(f"{section}.pod.serviceAccountName"):
            yield Hit(f"{section}.pod.serviceAccountName", message)
        else:
            yield Hit(f"{pod_path}.serviceAccountName", message, obj=o)
