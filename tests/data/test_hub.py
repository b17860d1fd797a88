"""grpo-data reading from the Hub through huggingface_hub, against a loopback server emulating the Hub's dataset
endpoints: a branch is resolved to its commit and both are recorded; the token is sent, never printed."""

from __future__ import annotations

import json

import huggingface_hub.constants
import pyarrow.parquet as pq
import pytest

from ..models.fakehub import FakeHub
from . import sources

TOKEN = "hf_DataTokenNeverPrinted42"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"


@pytest.fixture
def online(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)


def test_pinned_dataset_downloaded_and_prepared(online, run, tmp_path):
    repo = sources.gsm8k(tmp_path / "repo", [("a?", "1"), ("b?", "2")], [("t?", "3")])
    out = tmp_path / "train.parquet"
    with FakeHub(repo, "openai/gsm8k", "740312add88f781978c0658806c59bc2815b9866", repo_type="dataset") as hub:
        code, stdout, err = run("prepare", "--dataset", "gsm8k", "--endpoint", hub.url, "--output", str(out))
    assert code == 0, err
    assert sorted(r["extra_info"]["problem"] for r in pq.read_table(out).to_pylist()) == ["a?", "b?"]
    src = json.loads((tmp_path / "train.parquet.manifest.json").read_text())["sources"][0]
    assert [f["path"] for f in src["files"]] == ["main/train-00000-of-00001.parquet"]  # the test split not fetched
    assert src["commit"] == src["revision"] == "740312add88f781978c0658806c59bc2815b9866"
    assert set(hub.authorizations) == {f"Bearer {TOKEN}"}
    assert TOKEN not in stdout + err


def test_branch_resolved_and_recorded(online, run, tmp_path):
    repo = sources.apps(tmp_path / "repo", [("q.", {"inputs": ["1"], "outputs": ["1"]})], [])
    out = tmp_path / "train.parquet"
    with FakeHub(repo, "codeparrot/apps", COMMIT, branches={"refs/convert/parquet": COMMIT},
                 repo_type="dataset") as hub:
        code, _, err = run("prepare", "--dataset", "apps", "--allow-mutable", "--endpoint", hub.url,
                           "--output", str(out))
    assert code == 0, err
    src = json.loads((tmp_path / "train.parquet.manifest.json").read_text())["sources"][0]
    assert (src["revision"], src["commit"], src["mutable"]) == ("refs/convert/parquet", COMMIT, True)


def test_unknown_revision_is_one_line(online, run, tmp_path):
    repo = sources.gsm8k(tmp_path / "repo", [("a?", "1")], [("t?", "3")])
    with FakeHub(repo, "openai/gsm8k", COMMIT, repo_type="dataset") as hub:
        code, _, err = run("prepare", "--dataset", "gsm8k", "--endpoint", hub.url,
                           "--output", str(tmp_path / "o.parquet"))
    assert code == 2
    assert err == "grpo-data: gsm8k: revision 740312add88f781978c0658806c59bc2815b9866 not found in openai/gsm8k\n"
