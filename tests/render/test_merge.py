"""merged_values reuses one loaded chart for every merge (render.py): the result must be what a freshly loaded
chart gives, whatever was merged before."""

from __future__ import annotations

import random

import helm_python
from grpo_stack import render
from grpo_stack.errors import InputError
from grpo_stack.paths import REPO_ROOT
from grpo_stack.values import load_values_file, merge_user_values

BASE = REPO_ROOT / "values" / "qwen3-235b.yaml"


def user_values() -> list[tuple[str, dict]]:
    """Shipped values files, and every values fixture of the test suite over the 235B file (nulls that delete
    chart keys, disabled components, other frameworks): the inputs most likely to leave something behind."""
    out = [(p.name, merge_user_values([load_values_file(p)])) for p in sorted((REPO_ROOT / "values").glob("*.yaml"))]
    base = load_values_file(BASE)
    for p in sorted((REPO_ROOT / "tests").rglob("*.yaml")):
        try:
            vf = load_values_file(p)
        except InputError:
            continue
        if "apiVersion" not in vf.data and "kind" not in vf.data:
            out.append((str(p.relative_to(REPO_ROOT)), merge_user_values([base, vf])))
    return out


def test_merging_on_one_loaded_chart_equals_a_fresh_chart_each_time(monkeypatch):
    """A merge that changed the shared loaded chart would leak one values file's settings into every file
    linted after it: in order and shuffled, each merge equals the merge on a freshly loaded chart."""
    cases = user_values()
    assert len(cases) > 50
    order = cases + random.Random(7).sample(cases, len(cases))
    shared = [_merge(user) for _, user in order]
    loaded = []
    monkeypatch.setattr(render, "_merging_chart", lambda path: loaded.append(helm_python.Chart.load(path))
                        or loaded[-1])
    try:
        fresh = [_merge(user) for _, user in order]
    finally:
        for chart in loaded:
            chart.close()
    assert len(loaded) == len(order)
    for (name, _), a, b in zip(order, shared, fresh, strict=True):
        assert a == b, name


def _merge(user: dict):
    try:
        return render.merged_values(user)
    except helm_python.HelmError as exc:
        return ("refused", str(exc))
