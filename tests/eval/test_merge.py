"""grpo-eval merge / check-adapter and the evaluation release's provenance gate.

The merge tests run verl 0.9.1's own model merger and PEFT in the oracle venv (tests/oracle/setup_oracle_venv.sh;
GRPO_SKIP_ORACLE=1 skips them) on a tiny Qwen2 model and LoRA adapter built by tiny_lora_checkpoint.py, saved as
FSDP2 leaves it (DTensor shards over two gloo ranks). Not tested here: the Megatron merge (verl's Megatron merger
needs torch.distributed with GPUs), and a real training run's checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.cli.eval import main

from tests.oracle.client import SETUP_HINT, oracle_python, oracle_venv

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILDER = HERE / "tiny_lora_checkpoint.py"
GATE = REPO / "charts/grpo-stack/charts/vllm/files/check_provenance.py"


def _oracle() -> str:
    if os.environ.get("GRPO_SKIP_ORACLE") == "1":
        pytest.skip("GRPO_SKIP_ORACLE=1")
    python = oracle_python()
    if python is None:
        pytest.fail(f"oracle venv missing at {oracle_venv()}; {SETUP_HINT}", pytrace=False)
    return str(python)


def write_values(path: Path, rank=4, alpha=8, targets="all-linear") -> Path:
    """qwen3-8b with LoRA rank/alpha/targets; rank None: full fine-tuning (global.job.lora null)."""
    data = yaml.safe_load((REPO / "values" / "qwen3-8b.yaml").read_text())
    job = data["global"]["job"]
    job["lora"] = None if rank is None else {"rank": rank, "alpha": alpha, "targetModules": targets}
    job["trainer"]["checkpointDir"] = "ckpt"
    job["model"]["path"] = "base"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """OUT/base, OUT/adapter, OUT/ckpt/global_step_3/actor (FSDP, LoRA r4 alpha8 all-linear) and OUT/values.yaml."""
    python = _oracle()
    out = tmp_path_factory.mktemp("tiny")
    subprocess.run([python, str(BUILDER), "build", str(out)], check=True, capture_output=True, timeout=900)
    write_values(out / "values.yaml")
    return out


def logits(base: Path, adapter: Path, merged: Path) -> dict:
    proc = subprocess.run([_oracle(), str(BUILDER), "logits", str(base), str(adapter), str(merged)],
                          check=True, capture_output=True, text=True, timeout=600)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def gate(model_dir: Path, values: Path, step: int) -> subprocess.CompletedProcess:
    """The vLLM init container, with the EXPECTED_RUN the chart renders for an evaluation release of `values`."""
    from grpo_stack.render import render
    from grpo_stack.values import load_values_file, merge_user_values

    user = merge_user_values([load_values_file(values), load_values_file(REPO / "values/eval/eval.yaml")])
    user["global"]["eval"] = {"checkpointStep": step}
    d = next(o.obj for o in render(user, release="ev", namespace="ns").of_kind("Deployment"))
    init = d["spec"]["template"]["spec"]["initContainers"][0]
    env = {e["name"]: e["value"] for e in init["env"]}
    return subprocess.run([sys.executable, str(GATE), str(model_dir)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60)


def test_fsdp_lora_checkpoint_merges_to_a_model_that_matches_base_plus_adapter(tiny, capsys):
    """verl's merger writes base weights + lora_adapter/; the adapter is checked and folded in. The merged model
    loads with transformers and gives the logits of base + adapter (bf16 rounding only; the adapter's own effect
    is two orders of magnitude larger, so a merge that dropped it fails)."""
    code = main(["merge", "--values", str(tiny / "values.yaml"), "--step", "3", "--storage-root", str(tiny),
                 "--python", _oracle()])
    assert code == 0, capsys.readouterr().err
    merged = tiny / "ckpt/global_step_3/merged"
    assert not (tiny / "ckpt/global_step_3/merged.partial").exists()
    prov = json.loads((merged / "grpo-provenance.json").read_text())
    assert prov["run"] == {"experiment": "qwen3-8b-grpo", "checkpointDir": "ckpt", "modelPath": "base",
                           "framework": "verl", "backend": "fsdp",
                           "lora": {"rank": 4, "alpha": 8, "targetModules": "all-linear"}}
    assert prov["source"]["step"] == 3 and prov["source"]["kind"] == "verl-fsdp"
    assert prov["source"]["checkpoint"] == str(tiny / "ckpt/global_step_3/actor")
    assert prov["source"]["merger"] == "verl 0.9.1"
    import hashlib
    assert prov["values"] == [{"file": str(tiny / "values.yaml"),
                               "sha256": hashlib.sha256((tiny / "values.yaml").read_bytes()).hexdigest()}]
    assert prov["adapter"]["r"] == 4 and prov["adapter"]["lora_alpha"] == 8 and prov["adapterVerified"] is True
    diff = logits(tiny / "base", tiny / "adapter", merged)
    assert diff["merged_vs_adapter"] < 0.02 and diff["adapter_effect"] > 0.2, diff

    # The evaluation release serves it only for this run and this step.
    assert gate(merged, tiny / "values.yaml", 3).returncode == 0
    wrong_step = gate(merged, tiny / "values.yaml", 4)
    assert wrong_step.returncode == 1 and "merged from step 3, this release evaluates step 4" in wrong_step.stderr
    other_run = gate(merged, write_values(tiny / "other.yaml", rank=8, alpha=16), 3)
    assert other_run.returncode == 1 and "run.lora" in other_run.stderr
    no_prov = gate(tiny / "base", tiny / "values.yaml", 3)
    assert no_prov.returncode == 1 and "no provenance file" in no_prov.stderr

    # Never overwritten.
    assert main(["merge", "--values", str(tiny / "values.yaml"), "--step", "3", "--storage-root", str(tiny),
                 "--python", _oracle()]) == 1
    assert "already exists" in capsys.readouterr().err


def test_lora_adapter_folds_into_base(tiny, capsys):
    target = tiny / "adapter-merged"
    code = main(["merge", "--values", str(tiny / "values.yaml"), "--step", "3", "--storage-root", str(tiny),
                 "--adapter", str(tiny / "adapter"), "--target", str(target), "--python", _oracle()])
    assert code == 0, capsys.readouterr().err
    prov = json.loads((target / "grpo-provenance.json").read_text())
    assert prov["source"]["kind"] == "lora-adapter" and prov["source"]["base"] == str(tiny / "base")
    diff = logits(tiny / "base", tiny / "adapter", target)
    assert diff["merged_vs_adapter"] < 0.02 and diff["adapter_effect"] > 0.2, diff


def test_mismatched_adapter_is_refused(tiny, capsys):
    """Predecessor: merge_adapter.sh merged the wrong experiment's adapter by default and every parity gate passed,
    because none looked at which adapter it was. Here the adapter must match the values, or nothing is merged."""
    wrong = write_values(tiny / "wrong.yaml", rank=4, alpha=16)
    assert main(["check-adapter", str(tiny / "adapter"), "--values", str(wrong)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lora_alpha 8 != global.job.lora.alpha 16" in err
    target = tiny / "refused"
    assert main(["merge", "--values", str(wrong), "--step", "3", "--storage-root", str(tiny),
                 "--adapter", str(tiny / "adapter"), "--target", str(target), "--python", _oracle()]) == 1
    assert "--allow-unverified" in capsys.readouterr().err and not target.exists()
    assert main(["check-adapter", str(tiny / "adapter"), "--values", str(tiny / "values.yaml")]) == 0
    assert main(["check-adapter", str(tiny / "adapter"), "--values", str(wrong), "--allow-unverified"]) == 0
    assert "UNVERIFIED" in capsys.readouterr().err


def test_verl_checkpoint_without_lora_metadata_is_refused(tiny, capsys):
    """verl's merger falls back to lora_alpha 0 when lora_train_meta.json is missing, an adapter that silently
    scales to nothing. The check catches it instead of serving the base model under the run's name."""
    ckpt = tiny / "nometa/global_step_3/actor"
    shutil.copytree(tiny / "ckpt/global_step_3/actor", ckpt)
    (ckpt / "lora_train_meta.json").unlink()
    target = tiny / "nometa-merged"
    code = main(["merge", "--values", str(tiny / "values.yaml"), "--step", "3", "--storage-root", str(tiny),
                 "--checkpoint", str(ckpt), "--target", str(target), "--python", _oracle()])
    assert code == 1 and not target.exists()
    assert "lora_alpha 0 != global.job.lora.alpha 8" in capsys.readouterr().err
