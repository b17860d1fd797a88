"""docs/values.md: every key of every chart with its type, default and description, from the model."""

from __future__ import annotations

import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel

from ..paths import CHART_DIR, SUBCHART_DIR
from .components import SUBCHARTS, Global
from .job import JOB_VARIANTS


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if origin is typing.Literal:
        return " | ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin is list:
        return f"list[{_type_name(typing.get_args(annotation)[0])}]"
    if origin is dict:
        return "map[{}, {}]".format(*(_type_name(a) for a in typing.get_args(annotation)))
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))


def _submodel(annotation: Any) -> type[BaseModel] | None:
    for arg in (annotation, *typing.get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _job_rows(prefix: str) -> list[str]:
    """global.job: every key of every framework/backend variant, with the variants it applies to."""
    found: dict[str, tuple[list[str], str, list[str]]] = {
        f"{prefix}.framework": ([], "", []), f"{prefix}.backend": ([], "", [])}

    def add(key: str, kind: str, desc: str, variant: str) -> None:
        kinds, first_desc, variants = found.setdefault(key, ([], desc, []))
        if kind not in kinds:
            kinds.append(kind)
        variants.append(variant)
        found[key] = (kinds, first_desc or desc, variants)

    def walk(model: type[BaseModel], path: str, variant: str) -> None:
        for name, field in model.model_fields.items():
            key = f"{path}.{name}"
            sub = _submodel(field.annotation)
            optional = "" if field.is_required() else " *Optional.*"
            if sub is not None:
                if not field.is_required():
                    add(key, "object \\| null", (field.description or _first_line(sub.__doc__)) + optional, variant)
                walk(sub, key, variant)
                continue
            kind = _type_name(field.annotation).replace(" | ", " \\| ")
            add(key, kind, (field.description or "").replace("|", "\\|") + optional, variant)

    for (framework, backend), model in JOB_VARIANTS.items():
        walk(model, prefix, f"{framework}/{backend}")
    rows = []
    for key, (kinds, desc, variants) in found.items():
        applies = "all" if len(set(variants)) == len(JOB_VARIANTS) else ", ".join(dict.fromkeys(variants))
        rows.append(f"| `{key}` | {' / '.join(kinds)} | {applies} | {desc} |")
    return rows


def _rows(model: type[BaseModel], prefix: str, defaults: Any, absent: bool = False) -> list[str]:
    """One row per key; an optional section without a default (`absent`) gets its own row, then its keys' rows
    with no default shown (the section is written whole or not at all)."""
    rows = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if path == "global.job":
            continue
        default = defaults.get(name) if isinstance(defaults, dict) else None
        if typing.get_origin(field.annotation) is dict:  # a map by name; its entries' keys under `<name>`
            rows.append(f"| `{path}` | {_type_name(field.annotation)} | `{yaml.safe_dump(default).strip()}` | "
                        f"{(field.description or '').replace('|', chr(92) + '|')} |")
            entry = _submodel(typing.get_args(field.annotation)[1])
            rows.extend(_rows(entry, f"{path}.<name>", {}, absent=True) if entry else [])
            continue
        sub = _submodel(field.annotation)
        if sub is not None and isinstance(default, dict | type(None)) and default is not None:
            rows.extend(_rows(sub, path, default, absent))
            continue
        dumped = yaml.safe_dump(default).strip().removesuffix("...").strip()
        shown = "" if (default is None and sub is not None) or absent else f"`{dumped}`"
        desc = field.description or (_first_line(sub.__doc__) if sub else "")
        kind = _type_name(field.annotation).replace(" | ", " \\| ")
        desc = desc.replace("|", "\\|")
        rows.append(f"| `{path}` | {kind} | {shown} | {desc} |")
        if sub is not None and default is None:
            rows.extend(_rows(sub, path, {}, absent=True))
    return rows


SCHEDULING = [
    "## Scheduling and identity",
    "",
    "Every pod the chart makes (the Ray head and workers, sandbox-fusion, reward-service, fsx-utils, vllm, lm-eval",
    "and the helm test hooks) gets `global.pod`; each component's `pod` section (`raycluster.head.pod`,",
    "`raycluster.worker.pod`, `<component>.pod`) adds to it, and the helm test hooks get `global.pod` alone.",
    "Maps (`nodeSelector`, `labels`, `annotations`) are merged, the component's key winning; lists",
    "(`nodeAffinity`, `tolerations`) are joined; a component's `priorityClassName` replaces the global one. The",
    "chart's own settings always stay: the instance-type selector (from the component's instance type key; the",
    "schema refuses `node.kubernetes.io/instance-type` here), the GPU taint toleration of the Ray workers and vLLM,",
    "the sandbox's anti-affinity and dedicated node group, the config-hash and instrumentation annotations, and the",
    "chart's labels (the schema refuses a label its selectors use). `nodeAffinity` entries all hold at once (one",
    "required node selector term). Changing a Ray pod's labels or annotations recreates the Ray pods (config hash).",
    "",
    "`serviceAccountName` gives a pod an identity (IRSA: the account's `eks.amazonaws.com/role-arn` annotation; EKS",
    "Pod Identity: an association for the account) and mounts its token there only",
    "(`automountServiceAccountToken: true`); every other pod mounts none. grpo-lint GRPO821 refuses it on pods that",
    "run model-written code (sandbox-fusion, lm-eval); GRPO618 refuses a `nodeSelector` or `nodeAffinity` that",
    "excludes the instance type (`karpenter.k8s.aws/instance-family: p5` on a `p5en.48xlarge` worker).",
    "`global.imageRegistry` replaces the registry of every image (a mirror, an ECR pull-through cache) and",
    "`global.imagePullSecrets` names the Secrets every pod pulls with.",
    "",
    "An instance type key (`gpuInstanceType`, `<component>.instanceType`) must name a type grpo-lint's catalogue",
    "lists (`tools/grpo_stack/catalog/instances.py`), or a real one whose node capacity `global.instanceTypes`",
    "states (`kubectl describe node`'s Allocatable); GRPO601 then fits the pods to those figures. The same entry",
    "in `.grpo-lint.yaml` (`instance-types`) serves every file the lint checks; the values file's wins for its",
    "release. The chart does not read it.",
    "",
    "```yaml",
    "global:",
    "  pod:",
    "    nodeAffinity: [{key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a]}]",
    "    annotations: {karpenter.sh/do-not-disrupt: \"true\"}",
    "    labels: {cost-center: rl}",
    "  imageRegistry: 123456789012.dkr.ecr.us-west-2.amazonaws.com",
    "raycluster:",
    "  worker:",
    "    pod: {serviceAccountName: trainer, priorityClassName: gpu-training}",
    "```",
    "",
    "```yaml",
    "global:",
    "  instanceTypes:",
    "    c7i.4xlarge: {cpu: 15890m, memory: 28379Mi, gpus: 0, efa: 0}",
    "raycluster:",
    "  head:",
    "    instanceType: c7i.4xlarge",
    "    resources: {cpu: \"8\", memory: 24Gi}",
    "```",
]


def values_reference() -> str:
    defaults = yaml.safe_load((CHART_DIR / "values.yaml").read_text()) or {}
    out = [
        "# Values reference",
        "",
        "Generated from `tools/grpo_stack/schema/` by `python -m grpo_stack.schema.generate`; do not edit.",
        "Defaults: `global` from `charts/grpo-stack/values.yaml`, each subchart's from its own `values.yaml`.",
        "Every key is required after merging",
        "(the defaults provide them) and unknown keys are rejected, so a typo fails at `helm install`.",
        "",
        "## global",
        "",
        "| key | type | default | description |",
        "|---|---|---|---|",
        *_rows(Global, "global", defaults.get("global", {})),
        "",
        *SCHEDULING,
        "",
        "## global.job",
        "",
        "The run. `framework` and `backend` select which keys apply (verl/fsdp, verl/megatron, miles/megatron);",
        "a key that does not apply is rejected with the reason. No key has a chart default; keys marked",
        "*Optional* may be left out, and then the framework's own default applies (named in the description).",
        "`lora: null` (or no `lora`) is full fine-tuning. The framework version and rollout engine come from the",
        "image (`raycluster.image`, see `images/README.md` and `tools/grpo_stack/catalog/images.py`).",
        "",
        "| key | type | applies to | description |",
        "|---|---|---|---|",
        *_job_rows("global.job"),
    ]
    for name, model in SUBCHARTS.items():
        out += ["", f"## {name}", "", "| key | type | default | description |", "|---|---|---|---|"]
        sub_defaults = yaml.safe_load((SUBCHART_DIR / name / "values.yaml").read_text()) or {}
        sub_defaults.update(defaults.get(name) or {})
        out += _rows(model, name, sub_defaults)
    return "\n".join(out) + "\n"
