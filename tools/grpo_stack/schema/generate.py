"""Generate every chart's values.schema.json and docs/values.md from the typed model.

Run `python -m grpo_stack.schema.generate` after changing the model; tests/schema fails on drift.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..paths import CHART_DIR, REPO_ROOT, SUBCHART_DIR
from .components import SUBCHARTS, Global
from .job import Variant, job_schema, not_here_properties

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"
# Helm adds a (empty) values section for every dependency, including the library chart.
LIBRARY_SECTION = {"grpo-common": {"type": "object", "description": "Library chart; has no values."}}


def _strip_titles(node: Any) -> Any:
    """Pydantic adds a `title` to everything; it is noise in a values schema."""
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _variants(cls: type = Variant) -> list[type[Variant]]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_variants(sub)]
    return out


def _model_schema(model: type[BaseModel]) -> tuple[dict, dict]:
    schema = model.model_json_schema(ref_template="#/$defs/{model}")
    defs = schema.pop("$defs", {})
    if "job" in schema.get("properties", {}):
        # The framework/backend union becomes if/then clauses: errors then name the key, not "no oneOf branch".
        schema["properties"]["job"] = {"$ref": "#/$defs/Job"}
        defs["Job"] = job_schema(defs)
    for variant in _variants():
        if variant.__name__ in defs:
            d = defs[variant.__name__]
            d["properties"] = {**d.get("properties", {}), **not_here_properties(variant, set(d.get("properties", {})))}
    return schema, defs


def _object(properties: dict[str, dict], defs: dict, description: str) -> dict:
    return _strip_titles({
        "$schema": SCHEMA_URI,
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": sorted(properties),
        "properties": properties,
        "$defs": dict(sorted(defs.items())),
    })


def _optional(defs: dict, keep: set[str]) -> dict:
    """Drop `required` from subchart-only definitions: `helm lint -f` validates a partial subchart section
    before the subchart's defaults are coalesced in. grpo-lint checks the coalesced section is complete."""
    return {name: (d if name in keep else {k: v for k, v in d.items() if k != "required"}) for name, d in defs.items()}


def chart_schemas() -> dict[Path, dict]:
    """Schema per chart file path. Umbrella: global + every subchart section; subchart: global + its own keys."""
    global_schema, defs = _model_schema(Global)
    global_defs = set(defs) | {"Global"}
    umbrella_props: dict[str, dict] = {"global": {"$ref": "#/$defs/Global"}, **LIBRARY_SECTION}
    defs["Global"] = global_schema
    out: dict[Path, dict] = {}
    for name, model in SUBCHARTS.items():
        sub_schema, sub_defs = _model_schema(model)
        defs.update(_optional(sub_defs, set(global_defs)))
        # Helm injects `global` into every subchart before validating it, so the strict schema must declare it.
        section = {
            **sub_schema,
            "properties": {"global": {"$ref": "#/$defs/Global"}, **LIBRARY_SECTION, **sub_schema["properties"]},
        }
        # In the umbrella a section may be partial: a disabled subchart's defaults are never coalesced in,
        # and an enabled one is checked against its own schema (which requires every key) by Helm.
        defs[model.__name__] = {k: v for k, v in section.items() if k != "required"}
        sub_defs = _optional(sub_defs, global_defs)
        # The umbrella validates `global` once at the top; its copies inside sections need not be re-checked.
        defs[model.__name__]["properties"] = {**section["properties"], "global": {"type": "object"}}
        umbrella_props[name] = {"$ref": f"#/$defs/{model.__name__}"}
        # What grpo-lint checks after coalescing: the section complete, every key present.
        defs[f"{model.__name__}Complete"] = {**sub_schema, "properties": section["properties"]}
        own_defs = {**sub_defs, **_model_schema(Global)[1], "Global": global_schema}
        sub = _object(section["properties"], own_defs, f"Values of the {name} subchart of grpo-stack (generated).")
        sub["required"] = ["global"]
        if "allOf" in sub_schema:  # cross-field rules of the section (e.g. privileged needs dedicatedNodes)
            sub["allOf"] = sub_schema["allOf"]
        out[SUBCHART_DIR / name / "values.schema.json"] = sub
    umbrella = _object(umbrella_props, defs, "Values of the grpo-stack umbrella chart (generated; do not edit).")
    # A disabled subchart's section is absent from the merged values, so only `global` is required.
    umbrella["required"] = ["global"]
    out[CHART_DIR / "values.schema.json"] = umbrella
    return out


def render_json(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    from .docs import values_reference

    check = "--check" in (argv if argv is not None else sys.argv[1:])
    targets = {path: render_json(schema) for path, schema in chart_schemas().items()}
    targets[REPO_ROOT / "docs" / "values.md"] = values_reference()
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text() != text]
    if check:
        for p in stale:
            print(f"{p.relative_to(REPO_ROOT)}: out of date; run python -m grpo_stack.schema.generate")
        return 1 if stale else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(targets[p])
        print(f"wrote {p.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
