"""docs/values.md: every key of every chart with its type, default and description, from the model."""

from __future__ import annotations

import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel

from ..paths import CHART_DIR, SUBCHART_DIR
from .components import SUBCHARTS, Global


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


def _rows(model: type[BaseModel], prefix: str, defaults: Any) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        default = defaults.get(name) if isinstance(defaults, dict) else None
        sub = _submodel(field.annotation)
        if sub is not None and isinstance(default, dict | type(None)) and default is not None:
            rows.extend(_rows(sub, path, default))
            continue
        dumped = yaml.safe_dump(default).strip().removesuffix("...").strip()
        shown = "" if default is None and sub is not None else f"`{dumped}`"
        desc = field.description or (_first_line(sub.__doc__) if sub else "")
        kind = _type_name(field.annotation).replace(" | ", " \\| ")
        desc = desc.replace("|", "\\|")
        rows.append(f"| `{path}` | {kind} | {shown} | {desc} |")
    return rows


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
    ]
    for name, model in SUBCHARTS.items():
        out += ["", f"## {name}", "", "| key | type | default | description |", "|---|---|---|---|"]
        sub_defaults = yaml.safe_load((SUBCHART_DIR / name / "values.yaml").read_text()) or {}
        sub_defaults.update(defaults.get(name) or {})
        out += _rows(model, name, sub_defaults)
    return "\n".join(out) + "\n"
