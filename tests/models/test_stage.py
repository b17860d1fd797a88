"""grpo-models stage / verify on generated safetensors: clean passes, truncation and corruption are caught and
named, the manifest is byte-exact, mutable revisions are refused or recorded, shapes are checked."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from .modeldir import COMMIT, QWEN3_8B_CONFIG, make_model

SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"


def _stage(models, snapshot, dest, *extra, revision=COMMIT):
    return models("stage", "Qwen/Qwen3-8B", "--revision", revision, "--from-dir", str(snapshot),
                  "--dest", str(dest), *extra)


def test_clean_model_stages_with_a_byte_exact_manifest(models, snapshot, tmp_path):
    dest = tmp_path / "fsx" / "models" / "Qwen3-8B"
    code, out, err = _stage(models, snapshot, dest)
    assert code == 0, err
    assert f"staged Qwen/Qwen3-8B@{COMMIT} to {dest}: 7 files" in out
    files = sorted(p.name for p in snapshot.iterdir())
    expected = {
        "commit": COMMIT, "files": [
            {"path": f, "sha256": hashlib.sha256((snapshot / f).read_bytes()).hexdigest(),
             "size": (snapshot / f).stat().st_size} for f in files],
        "mutable": False, "repo": "Qwen/Qwen3-8B", "revision": COMMIT, "source": str(snapshot),
        "tool": "grpo-models 0.1.0",
    }
    text = (dest / "grpo-model-manifest.json").read_bytes()
    assert text == (json.dumps(expected, indent=2, sort_keys=True) + "\n").encode()
    code, out, _ = models("verify", str(dest))
    assert code == 0 and "7 files match the manifest" in out


def test_mount_and_name_give_the_destination(models, snapshot, tmp_path):
    code, _, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot),
                          "--mount", str(tmp_path / "fsx"))
    assert code == 0, err
    assert (tmp_path / "fsx" / "models" / "Qwen3-8B" / "grpo-model-manifest.json").is_file()


def _truncate(path: Path, keep: int) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:keep])


def test_truncated_shard_is_caught_and_named(models, snapshot, tmp_path):
    """The failure the predecessor's gate let through when safetensors was missing: a short download."""
    size = (snapshot / SHARD2).stat().st_size
    _truncate(snapshot / SHARD2, size - 100)
    dest = tmp_path / "dest"
    code, _, err = _stage(models, snapshot, dest)
    assert code == 1
    assert f"{dest / SHARD2}: tensor lm_head.weight: bytes 0..4096 beyond the 3996-byte data section (truncated)" \
        in err
    assert SHARD1 not in err
    assert "NOT staged (1 bad file(s)); no manifest written" in err
    assert not (dest / "grpo-model-manifest.json").exists()


def test_truncated_inside_the_header(models, snapshot, tmp_path):
    _truncate(snapshot / SHARD1, 40)
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1 and f"{SHARD1}: header of" in err and "runs past the end of the 40-byte file (truncated)" in err


def test_corrupted_header_is_caught(models, snapshot, tmp_path):
    data = bytearray((snapshot / SHARD1).read_bytes())
    data[9] = ord("!")  # inside the JSON header
    (snapshot / SHARD1).write_bytes(bytes(data))
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1 and f"{SHARD1}: header is not JSON" in err


def test_header_length_overflow_is_caught(models, snapshot, tmp_path):
    data = bytearray((snapshot / SHARD2).read_bytes())
    data[:8] = struct.pack("<Q", 2**62)
    (snapshot / SHARD2).write_bytes(bytes(data))
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1 and f"{SHARD2}: header length {2**62} is implausible (corrupt)" in err


def test_wrong_tensor_size_and_trailing_bytes(models, snapshot, tmp_path):
    with open(snapshot / SHARD2, "ab") as f:
        f.write(b"\0" * 8)
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1 and f"{SHARD2}: 8 bytes after the last tensor" in err


def test_corruption_after_staging_is_caught_by_verify(models, snapshot, tmp_path):
    """A flipped weight byte keeps the structure intact: only the manifest's sha256 can catch it."""
    dest = tmp_path / "d"
    assert _stage(models, snapshot, dest)[0] == 0
    data = bytearray((dest / SHARD1).read_bytes())
    data[-1] ^= 0xFF
    (dest / SHARD1).write_bytes(bytes(data))
    (dest / "tokenizer_config.json").unlink()
    (dest / "stray.bin").write_bytes(b"x")
    code, _, err = models("verify", str(dest))
    assert code == 1
    assert err.splitlines() == [
        f"grpo-models: {dest / SHARD1}: sha256 differs from the manifest",
        f"grpo-models: {dest / 'stray.bin'}: not in the manifest",
        f"grpo-models: {dest / 'tokenizer_config.json'}: missing",
    ]


def test_verify_catches_truncation_after_a_copy(models, snapshot, tmp_path):
    dest = tmp_path / "d"
    assert _stage(models, snapshot, dest)[0] == 0
    _truncate(dest / SHARD2, 100)
    code, _, err = models("verify", str(dest))
    assert code == 1 and f"{dest / SHARD2}: size 100, manifest" in err


def test_index_naming_a_missing_shard(models, snapshot, tmp_path):
    (snapshot / SHARD2).unlink()
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1
    assert f"model.safetensors.index.json: lm_head.weight: shard {SHARD2} missing" in err


@pytest.mark.parametrize("remove, message", [
    ("config.json", "config.json: missing"),
    ("tokenizer.json", "tokenizer: no tokenizer.json, tokenizer.model or vocab.json + merges.txt"),
])
def test_config_and_tokenizer_are_required(models, snapshot, tmp_path, remove, message):
    (snapshot / remove).unlink()
    code, _, err = _stage(models, snapshot, tmp_path / "d")
    assert code == 1 and message in err


def test_config_without_model_type(models, tmp_path):
    snap = make_model(tmp_path / "s", config={"hidden_size": 1})
    code, _, err = _stage(models, snap, tmp_path / "d")
    assert code == 1 and "config.json: no model_type" in err


def test_branch_revision_refused_unless_allowed_and_recorded(models, snapshot, tmp_path):
    code, _, err = _stage(models, snapshot, tmp_path / "d", revision="main")
    assert code == 2 and err.count("\n") == 1
    assert "--revision 'main' is a branch or tag, not a commit" in err
    code, out, err = _stage(models, snapshot, tmp_path / "d", "--allow-mutable", revision="main")
    assert code == 0, err
    assert "MUTABLE revision" in out
    body = json.loads((tmp_path / "d" / "grpo-model-manifest.json").read_text())
    assert body["mutable"] is True and body["revision"] == "main" and body["commit"] is None


def test_missing_revision_is_one_line(models, snapshot, tmp_path):
    code, _, err = models("stage", "Qwen/Qwen3-8B", "--from-dir", str(snapshot), "--dest", str(tmp_path / "d"))
    assert code == 2 and err == "grpo-models: the following arguments are required: --revision\n"


def test_unwritable_destination(models, snapshot, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = _stage(models, snapshot, tmp_path / "file" / "model")
    assert code == 2 and err.count("\n") == 1 and "cannot write there" in err


def test_verify_without_manifest(models, snapshot):
    code, _, err = models("verify", str(snapshot))
    assert code == 2 and "no manifest (stage the model with grpo-models stage first)" in err


def _values(tmp_path: Path, preset: str) -> Path:
    repo = Path(__file__).resolve().parents[2]
    text = (repo / "values" / "qwen3-8b.yaml").read_text().replace("preset: qwen3-8b", f"preset: {preset}")
    path = tmp_path / "values.yaml"
    path.write_text(text)
    return path


def test_values_shape_matches(models, snapshot, tmp_path):
    code, _, err = _stage(models, snapshot, tmp_path / "d", "--values", str(_values(tmp_path, "qwen3-8b")))
    assert code == 0, err


def test_values_shape_mismatch_fails(models, snapshot, tmp_path):
    """A values file for Qwen3-4B next to Qwen3-8B weights: the run would build the wrong parallelism."""
    values = _values(tmp_path, "qwen3-4b")
    code, _, err = _stage(models, snapshot, tmp_path / "d", "--values", str(values))
    assert code == 1
    assert "config.json: layers: values declare 36" not in err
    assert "config.json: hidden: values declare 2560, config.json hidden_size = 4096" in err
    assert not (tmp_path / "d" / "grpo-model-manifest.json").exists()


def test_moe_values_against_dense_config(models, tmp_path):
    snap = make_model(tmp_path / "s", config=dict(QWEN3_8B_CONFIG, hidden_size=2048, num_hidden_layers=48,
                                                   num_key_value_heads=4))
    code, _, err = _stage(models, snap, tmp_path / "d", "--values", str(_values(tmp_path, "qwen3-30b-a3b")))
    assert code == 1 and "experts: values declare 128, config.json num_experts = 0" in err


def test_missing_safetensors_package_is_an_error(snapshot, tmp_path):
    """The predecessor's gate printed a warning and passed when safetensors was absent; here it is exit 2."""
    blocker = tmp_path / "block" / "safetensors"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError(\"No module named 'safetensors'\", name='safetensors')\n")
    dest = tmp_path / "d"
    env_path = f"{tmp_path / 'block'}"
    for cmd in (["stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot), "--dest", str(dest)],
                ["verify", str(snapshot)]):
        r = subprocess.run([sys.executable, "-c", "import sys; from grpo_stack.cli.models import main; "
                            "sys.exit(main(sys.argv[1:]))", *cmd],
                           capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
                           timeout=120)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("grpo-models: safetensors is not installed; it is required to verify weights")
    assert not dest.exists()


def test_leftover_files_from_another_staging_are_caught(models, snapshot, tmp_path):
    """Restaging into a used directory: a file the new source does not have would silently join the model."""
    dest = tmp_path / "d"
    assert _stage(models, snapshot, dest)[0] == 0
    (snapshot / "generation_config.json").unlink()
    code, _, err = _stage(models, snapshot, dest)
    assert code == 1
    assert f"{dest / 'generation_config.json'}: not part of Qwen/Qwen3-8B@{COMMIT} (left from an earlier staging?" \
        in err
    assert not (dest / "grpo-model-manifest.json").exists()


def test_values_place_the_model_where_the_run_reads_it(models, snapshot, tmp_path):
    """With --values and no --dest, the model lands at <mount>/<global.job.model.path>."""
    values = _values(tmp_path, "qwen3-8b")
    values.write_text(values.read_text().replace("path: models/Qwen3-8B", "path: weights/q8"))
    code, out, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot),
                            "--values", str(values), "--mount", str(tmp_path / "fsx"))
    assert code == 0, err
    assert (tmp_path / "fsx" / "weights" / "q8" / "grpo-model-manifest.json").is_file()
