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
    assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml", rank=None))]) == 1
    assert "train without LoRA" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["{not json", "[]", '{"r": "four", "lora_alpha": 8}', "[" * 100000 + "]" * 100000])
def test_malformed_adapter_config_is_bad_input(tmp_path, capsys, content):
    """A file that is no adapter config is exit 2 (bad input), not a mismatch (exit 1) --allow-unverified passes."""
    d = tmp_path / "adapter"
    d.mkdir()
    (d / "adapter_config.json").write_text(content)
    for extra in ([], ["--allow-unverified"]):
        assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml")), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "adapter_config.json" in err, err


def test_missing_adapter_config_is_a_mismatch(tmp_path, capsys):
    d = tmp_path / "adapter"
    d.mkdir()
    assert main(["check-adapter", str(d), "--values", str(write_values(tmp_path / "v.yaml"))]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_bad_values_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "v.yaml"
    bad.write_text("global: [1\n")
    d = adapter(tmp_path, r=4, lora_alpha=8, target_modules="all-linear")
    assert main(["check-adapter", str(d), "--values", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_merge_of_a_missing_checkpoint_exits_1_and_leaves_nothing(tmp_path, capsys):
    values = write_values(tmp_path / "v.yaml")
    code = main(["merge", "--values", str(values), "--step", "5", "--storage-root", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "not a verl checkpoint" in err
    assert not (tmp_path / "ckpt/global_step_5/merged").exists()
    assert not (tmp_path / "ckpt/global_step_5/merged.partial").exists()


@pytest.mark.parametrize("argv", [["--step", "x"], ["--step", "-1"],
                                  ["--step", "1", "--checkpoint", "a", "--adapter", "b"]])
def test_merge_bad_arguments_exit_2(tmp_path, capsys, argv):
    values = write_values(tmp_path / "v.yaml")
    try:
        code = main(["merge", "--values", str(values), *argv])
    except SystemExit as e:
        code = e.code
    assert code == 2 and capsys.readouterr().err.count("\n") == 1


def test_merge_with_broken_values_exits_2(tmp_path, capsys):
    bad = tmp_path / "v.yaml"
    bad.write_text("global:\n  job: 3\n")
    assert main(["merge", "--values", str(bad), "--step", "1", "--storage-root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
