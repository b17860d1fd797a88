"""The one builder: job spec (values + in-release endpoints) -> the verl or miles command.

Stdlib only, so the recipe can run it inside the Ray head pod with the chart-rendered job.json.
"""

from __future__ import annotations

from typing import Any

from . import miles_flags
from .args import Arg, BuildError, BuiltJob
from .miles import build_miles
from .spec import Spec
from .verl import build_verl

__all__ = ["Arg", "BuildError", "BuiltJob", "Spec", "build", "miles_flags"]


def build(spec_data: dict[str, Any]) -> BuiltJob:
    spec = Spec(spec_data)
    framework = spec.get("framework")
    if framework == "verl":
        return build_verl(spec)
    if framework == "miles":
        return build_miles(spec)
    # The schema already restricts this; the builder still refuses rather than falling back to one path.
    raise BuildError(f"global.job.framework: unknown framework {framework!r} (verl or miles)")
