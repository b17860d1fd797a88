"""docs/security.md: model-written code runs only in the sandbox. `reward.kind: builtin` with a code dataset is
refused by grpo-lint for verl (whose builtin scorer exec()s the program in the GPU workers) and miles (a math
scorer), at the key, with the fix; every code adapter of grpo-data's registry is caught, not a list of names."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.lint import main
from grpo_stack.data.adapters import REGISTRY
from grpo_stack.paths import REPO_ROOT

CODE_SETS = sorted(name for name, a in REGISTRY.items() if a.ability == "code")


def _values_file(tmp_path, base: str, train: list[str] | None) -> tuple[str, int]:
    """A full values file (the shipped one with reward.kind builtin and the given prepared sets) and the line of the
    last train dataset."""
    from ruamel.yaml import YAML

    yaml = YAML()
    data = yaml.load((REPO_ROOT / "values" / f"{base}.yaml").read_text())
    data["global"]["job"]["reward"]["kind"] = "builtin"
    if train is not None:
        data["fsx-utils"].setdefault("data", {})["train"] = train
    out = tmp_path / f"{base}.yaml"
    with out.open("w") as f:
        yaml.dump(data, f)
    lines = out.read_text().splitlines()
    line = max((i for i, t in enumerate(lines, 1) if train and t.strip() in (f"- {train[-1]}", f"{train[-1]}")),
               default=0)
    return str(out), line


def _lint(capsys, path: str) -> tuple[int, list[dict]]:
    code = main([path, "--format", "json", "--select", "GRPO552"])
    report = json.loads(capsys.readouterr().out)
    assert report["input_errors"] == []
    return code, report["findings"]


@pytest.mark.parametrize("base", ["qwen3-8b", "miles-qwen3-30b-a3b"])
@pytest.mark.parametrize("dataset", CODE_SETS)
def test_builtin_reward_on_a_code_set_is_refused_at_the_key(capsys, tmp_path, base, dataset):
    path, line = _values_file(tmp_path, base, ["dapo-math-17k", dataset])
    code, findings = _lint(capsys, path)
    assert code in (1, 2)
    (finding,) = findings
    assert finding["code"] == "GRPO552" and finding["line"] == line and finding["file"] == path
    assert "reward.kind: sandbox" in json.dumps(finding)


@pytest.mark.parametrize("base", ["qwen3-8b", "miles-qwen3-30b-a3b"])
def test_builtin_reward_on_math_sets_stays_clean(capsys, tmp_path, base):
    code, findings = _lint(capsys, _values_file(tmp_path, base, None)[0])
    assert findings == []
