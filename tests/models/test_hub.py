"""grpo-models stage through huggingface_hub against a loopback server emulating the Hub's endpoints (model
info with file metadata, tree, resolve): the branch is resolved to a commit, the token is sent but never
printed, the Hub's published sha256 is enforced, and a refused connection is one line, exit 2."""

from __future__ import annotations

import json
import socket

import huggingface_hub.constants
import pytest

from .fakehub import FakeHub
from .modeldir import COMMIT

TOKEN = "hf_DoNotPrintThisToken0123456789"
SHARD2 = "model-00002-of-00002.safetensors"


@pytest.fixture
def online(monkeypatch, tmp_path):
    """The Hub switched back on for these tests only; the endpoint is always the loopback server."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def _stage(models, hub, dest, revision, *extra):
    return models("stage", "Qwen/Qwen3-8B", "--revision", revision, "--endpoint", hub.url, "--dest", str(dest),
                  *extra)


def test_branch_resolved_to_its_commit_and_token_sent_not_printed(online, models, snapshot, tmp_path):
    with FakeHub(snapshot, "Qwen/Qwen3-8B", COMMIT) as hub:
        code, out, err = _stage(models, hub, tmp_path / "d", "main", "--allow-mutable")
    assert code == 0, err
    body = json.loads((tmp_path / "d" / "grpo-model-manifest.json").read_text())
    assert (body["revision"], body["commit"], body["mutable"], body["source"]) == ("main", COMMIT, True, "hub")
    assert [f["path"] for f in body["files"]] == sorted(p.name for p in snapshot.iterdir())
    assert set(hub.authorizations) == {f"Bearer {TOKEN}"}
    assert TOKEN not in out + err


def test_pinned_commit(online, models, snapshot, tmp_path):
    with FakeHub(snapshot, "Qwen/Qwen3-8B", COMMIT) as hub:
        code, _, err = _stage(models, hub, tmp_path / "d", COMMIT)
    assert code == 0, err
    assert json.loads((tmp_path / "d" / "grpo-model-manifest.json").read_text())["mutable"] is False


def test_unknown_revision(online, models, snapshot, tmp_path):
    with FakeHub(snapshot, "Qwen/Qwen3-8B", COMMIT) as hub:
        code, _, err = _stage(models, hub, tmp_path / "d", "f" * 40)
    assert code == 2 and err == f"grpo-models: Qwen/Qwen3-8B: revision {'f' * 40} not found\n"


def test_file_differing_from_the_published_sha256(online, models, snapshot, tmp_path):
    """A byte flipped in transit or on disk: structure intact, but not the file the Hub published."""
    with FakeHub(snapshot, "Qwen/Qwen3-8B", COMMIT) as hub:
        hub.lie_about[SHARD2] = "0" * 64
        code, _, err = _stage(models, hub, tmp_path / "d", COMMIT)
    assert code == 1
    assert f"{tmp_path / 'd' / SHARD2}: sha256 " in err and f"but the source publishes {'0' * 64}" in err
    assert not (tmp_path / "d" / "grpo-model-manifest.json").exists()


def test_truncated_file_served(online, models, snapshot, tmp_path):
    data = (snapshot / SHARD2).read_bytes()
    (snapshot / SHARD2).write_bytes(data[:-64])
    with FakeHub(snapshot, "Qwen/Qwen3-8B", COMMIT) as hub:
        code, _, err = _stage(models, hub, tmp_path / "d", COMMIT)
    assert code == 1 and f"{SHARD2}: tensor lm_head.weight: bytes 0..4096 beyond" in err


def test_refused_connection_is_one_line_without_the_token(online, models, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = models("stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--endpoint", f"http://127.0.0.1:{port}",
                            "--dest", str(tmp_path / "d"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"grpo-models: Qwen/Qwen3-8B@{COMMIT}: download failed:")
    assert TOKEN not in out + err
