"""grpo-lint renders without Helm's values-schema check (render(helm_schema=False)) because it has just run the
same check itself (values.schema_violations): Helm recompiles every chart schema on each render, most of a
render's time. That is only sound if (1) the schema-less render produces exactly the manifests and notes Helm's
normal render does, and (2) Helm refuses no values the own check accepts — otherwise grpo-lint would pass values
`helm install` refuses. Both are checked here against Helm's own engine (helm_python)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from grpo_stack.render import RenderError, render

from tests.conftest import own_check_refuses

# A verl FSDP file, a miles file and a verl Megatron + LoRA file: between them every job variant and every
# subchart section the shipped files set (enabled and disabled components).
MUTATED = ["qwen3-8b", "miles-qwen3-4b", "qwen3-235b"]
# Wrong type, out of range, null, wrong container, and a huge number: the refusals the schemas exist for.
WRONG = ["a string", -1, None, {}, [1], 10**7]
DELETE = object()
# Of the mutations the own check refuses, Helm is asked about one in SAMPLE (it agrees on nearly all).
SAMPLE = 7


def leaves(node: Any, prefix: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in leaves(v, (*prefix, k))] or [prefix]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in leaves(v, (*prefix, i))] or [prefix]
    return [prefix]


def with_leaf(values: dict, path: tuple, value: Any) -> dict:
    out = copy.deepcopy(values)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def helm_schema_refusal(values: dict) -> str | None:
    try:
        render(values, helm_schema=True)
    except RenderError as exc:
        return str(exc) if "schema" in str(exc) else None
    return None


def test_schemaless_render_is_the_same_render(shipped_values, values_name):
    """Dropping the schema files changes nothing Helm renders: same templates, same text, same notes."""
    values = shipped_values[values_name]
    with_schema, without = render(values, helm_schema=True), render(values, helm_schema=False)
    assert with_schema.manifests == without.manifests
    assert with_schema.notes == without.notes


def test_schemaless_render_still_refuses_template_failures(shipped_values):
    """Only the schema check is skipped: a template's own `fail`/`required` still stops the render."""
    values = with_leaf(shipped_values["qwen3-8b"], ("global", "job"), DELETE)
    assert own_check_refuses(values)
    with pytest.raises(RenderError):
        render(values, helm_schema=False)


@pytest.mark.parametrize("name", MUTATED)
def test_helm_refuses_nothing_the_own_check_accepts(shipped_values, name):
    """Every leaf of the file set to each wrong value, and deleted: whenever Helm's schema check refuses, the own
    check refuses too (the converse is allowed: the own check is stricter where Helm's messages were unclear).
    Helm renders every mutation the own check accepts (the only ones that can disagree) and every SAMPLE-th one
    it refuses, which Helm must mostly refuse too: the mutations reach Helm's schema check."""
    base = shipped_values[name]
    helm_only, sampled, helm_refused = [], 0, 0
    mutations = [(path, value) for path in leaves(base) for value in [*WRONG, DELETE]]
    for i, (path, value) in enumerate(mutations):
        values = with_leaf(base, path, value)
        if own_check_refuses(values):
            if i % SAMPLE == 0:
                sampled += 1
                helm_refused += helm_schema_refusal(values) is not None
            continue
        helm = helm_schema_refusal(values)
        if helm is not None:
            helm_only.append((".".join(map(str, path)), value, helm.splitlines()[-1][:160]))
    assert sampled > len(mutations) // (2 * SAMPLE) and helm_refused > sampled // 2, \
        f"the mutations must exercise Helm's schema check: Helm refused {helm_refused} of {sampled} sampled"
    assert not helm_only, helm_only


@pytest.mark.parametrize("overlay, key", [
    ("vllm:\n  tensorParallel: null\n", "vllm.tensorParallel"),
    ("reward-service:\n  routes:\n    openai/gsm8k: null\n", "reward-service.routes.openai/gsm8k"),
])
def test_a_null_helm_refuses_is_an_input_error(tmp_path, capsys, repo_root, overlay, key):
    """Coalescing drops a user's `null`, so the own check used to pass values `helm install` refuses with
    `got null, want integer`; grpo-lint now refuses them at the key, exit 2."""
    from grpo_stack.cli.lint import main

    path = tmp_path / "overlay.yaml"
    path.write_text(overlay)
    code = main(["--base", str(repo_root / "values" / "qwen3-8b.yaml"), str(path)])
    out = capsys.readouterr()
    assert code == 2, out
    assert f"{path}:" in out.out + out.err and f"{key}: null is not allowed here" in out.out + out.err
