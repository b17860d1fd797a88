"""grpo-models has grpo-lint's contract: bad input is exit 2 with the file or argument named, never a traceback,
and nothing is written outside the mount (issue: `--name ../../escape`, relative `--mount`, a malformed
`--endpoint`, a deeply nested header or manifest, a manifest whose revision was edited to `main`)."""

from __future__ import annotations

import json
import struct

import pytest

from .modeldir import COMMIT

SHARD1 = "model-00001-of-00002.safetensors"


@pytest.mark.parametrize("extra,named", [
    (["--name", "../../escape"], "--name"), (["--name", ".."], "--name"), (["--mount", "relative/dir"], "--mount"),
    (["--endpoint", "htp:/nowhere"], "--endpoint"), (["--endpoint", "http://host:port"], "--endpoint"),
    (["--endpoint", "not a url"], "--endpoint"),
])
def test_bad_stage_arguments_are_usage_errors(models, snapshot, tmp_path, extra, named):
    mount = ["--mount", str(tmp_path / "fsx")] if "--mount" not in extra else []
    code, _, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot),
                          *mount, *extra)
    assert code == 2 and named in err and "Traceback" not in err, err
    assert not (tmp_path / "escape").exists() and not (tmp_path.parent / "escape").exists()


def test_deeply_nested_header_is_a_bad_file(models, snapshot, tmp_path):
    header = b"[" * 100_000 + b"]" * 100_000
    (snapshot / SHARD1).write_bytes(struct.pack("<Q", len(header)) + header)
    code, _, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot),
                          "--dest", str(tmp_path / "d"))
    assert code == 1 and SHARD1 in err and "Traceback" not in err, err


def _staged(models, snapshot, tmp_path):
    dest = tmp_path / "d"
    code, _, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot),
                          "--dest", str(dest))
    assert code == 0, err
    return dest


def test_deeply_nested_manifest_is_bad_input(models, snapshot, tmp_path):
    dest = _staged(models, snapshot, tmp_path)
    (dest / "grpo-model-manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = models("verify", str(dest))
    assert code == 2 and "grpo-model-manifest.json" in err, err


def test_verify_refuses_a_revision_edited_to_a_branch(models, snapshot, tmp_path):
    dest = _staged(models, snapshot, tmp_path)
    path = dest / "grpo-model-manifest.json"
    body = json.loads(path.read_text())
    body["revision"] = "main"
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    code, _, err = models("verify", str(dest))
    assert code == 1 and "'main'" in err and "edited" in err, err
