"""The in-pod submit's preparation steps with a stand-in for the Ray job API (no Ray, no kubectl): the miles
conversion writes its manifest only after success, a second submit skips it, and training is submitted after it.
The same paths against a real Ray head are in test_run_on_cluster.py (failure, skip)."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import pytest
from grpo_stack.job import submit
from grpo_stack.paths import REPO_ROOT
from grpo_stack.render import job_spec, render
from grpo_stack.values import load_values_file


class FakeRay:
    """Records submissions; a conversion "succeeds" by writing the converter's release tracker, as
    tools/convert_hf_to_torch_dist.py does."""

    def __init__(self, outcome: str = "SUCCEEDED"):
        self.jobs: list[tuple[list[str], dict, int]] = []
        self.outcome = outcome

    def submit(self, argv, env, num_gpus, label, job_id="", working_dir=None):
        self.jobs.append((argv, env, num_gpus))
        if any(a.endswith("convert_hf_to_torch_dist.py") for a in argv) and self.outcome == "SUCCEEDED":
            out = Path(argv[argv.index("--save") + 1])
            out.mkdir(parents=True, exist_ok=True)
            (out / "latest_checkpointed_iteration.txt").write_text("release")
        return job_id or f"{label}-1"

    def follow(self, job_id):
        pass

    def active_runs(self):
        """Nothing else runs on this head: the one-run-per-cluster check passes (tests/recipes/
        test_one_run_per_cluster.py runs it against a real head)."""
        return []

    def wait(self, job_id):
        return (self.outcome, 0) if self.outcome == "SUCCEEDED" else (self.outcome, 1)


@pytest.fixture
def miles_spec(tmp_path):
    data = load_values_file(REPO_ROOT / "values" / "miles-qwen3-4b.yaml").data
    data["global"].setdefault("storage", {})["mountPath"] = str(tmp_path / "fsx")
    spec = job_spec(render(data, release="grpo", namespace="grpo"))
    model = tmp_path / "fsx" / spec["job"]["model"]["path"]
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"]}')
    path = tmp_path / "job.json"
    path.write_text(json.dumps(spec))
    return path, spec


def run(path, monkeypatch, fake, **kw):
    monkeypatch.setattr(submit, "Ray", lambda address: fake)
    opts = argparse.Namespace(spec=str(path), address="http://ray", dry_run=False, follow=False,
                              expect_spec_sha256=None, expect_spec_text_sha256=None, spec_sha256_of=None, skip_check=[],
                              overwrite_checkpoints=False)
    for k, v in kw.items():
        setattr(opts, k, v)
    return submit.run(opts)


def test_conversion_runs_once_then_is_skipped(miles_spec, monkeypatch, capsys):
    path, spec = miles_spec
    fake = FakeRay()
    assert run(path, monkeypatch, fake) == 0
    (convert, env, gpus), (train, _, train_gpus) = fake.jobs
    assert "convert_hf_to_torch_dist.py" in " ".join(convert) and gpus == spec["cluster"]["gpusPerNode"]
    assert train[:4] == ["bash", "-c", 'source "$0" && exec "$@" "${MODEL_ARGS[@]}"',
                         "/root/miles/scripts/models/qwen3-4B.sh"] and train_gpus == 0
    assert env["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    out = Path(convert[convert.index("--save") + 1])
    manifest = json.loads((out / submit.MANIFEST).read_text())
    model = Path(convert[convert.index("--hf-checkpoint") + 1])
    assert manifest["hfConfigSha256"] == hashlib.sha256((model / "config.json").read_bytes()).hexdigest()

    again = FakeRay()
    assert run(path, monkeypatch, again) == 0
    assert len(again.jobs) == 1 and "train.py" in " ".join(again.jobs[0][0])
    assert "skipped (matching manifest)" in capsys.readouterr().out


def test_failed_conversion_writes_no_manifest(miles_spec, monkeypatch, capsys):
    path, _ = miles_spec
    fake = FakeRay("FAILED")
    assert run(path, monkeypatch, fake) == 1
    assert len(fake.jobs) == 1
    out = Path(fake.jobs[0][0][fake.jobs[0][0].index("--save") + 1])
    assert not (out / submit.MANIFEST).exists()
    assert "training not submitted" in capsys.readouterr().err


def test_unstaged_model_is_refused_before_any_job(miles_spec, monkeypatch):
    path, spec = miles_spec
    model = Path(json.loads(path.read_text())["storage"]["mountPath"]) / spec["job"]["model"]["path"]
    (model / "config.json").unlink()
    fake = FakeRay()
    with pytest.raises(submit.Refused, match="config.json"):
        run(path, monkeypatch, fake)
    assert fake.jobs == []


@pytest.fixture
def verl_spec(tmp_path):
    data = load_values_file(REPO_ROOT / "values" / "qwen3-8b.yaml").data
    data["global"].setdefault("storage", {})["mountPath"] = str(tmp_path / "fsx")
    data["global"]["job"]["resume"] = {"mode": "auto"}
    spec = job_spec(render(data, release="grpo", namespace="grpo"))
    path = tmp_path / "job.json"
    path.write_text(json.dumps(spec))
    return path, spec


def save_verl_step(spec, step: int, world_size: int) -> Path:
    root = Path(spec["storage"]["mountPath"]) / spec["job"]["trainer"]["checkpointDir"]
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    for rank in range(world_size):
        (actor / f"model_world_size_{world_size}_rank_{rank}.pt").write_bytes(b"")
    (root / "latest_checkpointed_iteration.txt").write_text(str(step))
    return root


def test_resume_onto_another_world_size_is_refused_before_any_job(verl_spec, monkeypatch):
    """verl FSDP checkpoints load only onto the world size that wrote them (verl issue 2265): the submit names
    both shapes and submits nothing."""
    path, spec = verl_spec
    assert spec["cluster"]["nodes"] * spec["cluster"]["gpusPerNode"] == 8
    root = save_verl_step(spec, 6, 4)
    fake = FakeRay()
    with pytest.raises(submit.Refused) as exc:
        run(path, monkeypatch, fake)
    text = str(exc.value)
    assert fake.jobs == []
    assert f"{root}/global_step_6 was written by 4 ranks (world size 4)" in text
    assert "1 node(s) x 8 GPUs (world size 8)" in text and "verl issue 2265" in text


def test_resume_onto_the_same_world_size_is_submitted(verl_spec, monkeypatch, capsys):
    path, spec = verl_spec
    root = save_verl_step(spec, 6, 8)
    fake = FakeRay()
    assert run(path, monkeypatch, fake) == 0
    assert len(fake.jobs) == 1
    assert f"resumes from step 6 in {root}" in capsys.readouterr().out
