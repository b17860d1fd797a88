"""check-adapter against hand-written adapter_config.json files (no model needed)."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.eval import main

from .test_merge import write_values


def adapter(tmp_path, **config):
    d = tmp_path / "adapter"
    d.mkdir()
    (d / "adapter_config.json").write_text(json.dumps(config))
    return d


@pytest.mark.parametrize("config, problem", [
    ({"r": 8, "lora_alpha": 8, "target_modules": "all-linear"}, "r 8 != global.job.lora.rank 4"),
    ({"r": 4, "lora_alpha": 0, "target_modules": "all-linear"}, "lora_alpha 0 != global.job.lora.alpha 8"),
    ({"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]}, "target_modules ['q_proj', 'v_proj']"),
    ({"lora_alpha": 8}, "r None"),
])
def test_mismatch_exits_1_naming_the_field(tmp_path, capsys, config, problem):
    code = main(["check-adapter", str(adapter(tmp_path, **config)), "--values", str(write_values(tmp_path / "v.yaml"))])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and problem in err


def test_all_linear_matches_the_projection_list(tmp_path):
    names = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    d = adapter(tmp_path, r=4, lora_alpha=8, target_modules=names)
    assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml"))]) == 0
    explicit = write_values(tmp_path / "e.yaml", targets="q_proj,v_proj")
    assert main(["check-adapter", str(d), "--values", str(explicit)]) == 1


def test_adapter_for_a_run_without_lora(tmp_path, capsys):
    d = adapter(tmp_path, r=4, lora_alpha=8, target_modules="all-linear")
    assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml", rank=0))]) == 1
    assert "train without LoRA" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["{not json", "[]", None])
def test_unreadable_adapter_config(tmp_path, capsys, content):
    d = tmp_path / "adapter"
    d.mkdir()
    if content is not None:
        (d / "adapter_config.json").write_text(content)
    assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml"))]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_bad_values_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "v.yaml"
    bad.write_text("global: [1\n")
    d = adapter(tmp_path, r=4, lora_alpha=8, target_modules="all-linear")
    assert main(["check-adapter", str(d), "--values", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
