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
    repo = sources.gsm8k(tmp_path / "repo", [("a?", "1")], [("t?", "3")])
    out = tmp_path / "train.parquet"
    with FakeHub(repo, "openai/gsm8k", COMMIT, branches={"main": COMMIT}, repo_type="dataset") as hub:
        code, _, err = run("prepare", "--dataset", "gsm8k", "--revision", "gsm8k=main", "--allow-mutable",
                           "--endpoint", hub.url, "--output", str(out))
    assert code == 0, err
    src = json.loads((tmp_path / "train.parquet.manifest.json").read_text())["sources"][0]
    assert (src["revision"], src["commit"], src["mutable"]) == ("main", COMMIT, True)


def test_apps_reads_its_json_lines_at_the_pinned_commit(online, run, tmp_path):
    """APPS has no parquet at any commit of main: its train.jsonl is fetched alone (not apps.py, which current
    datasets refuses to run, nor the 1.3 GB test.jsonl) and read without the loading script."""
    repo = sources.apps(tmp_path / "repo", [("Echo.", {"inputs": ["1\n"], "outputs": ["1\n"]})],
                        [("t", {"inputs": ["2\n"], "outputs": ["2\n"]})])
    out = tmp_path / "train.parquet"
    with FakeHub(repo, "codeparrot/apps", "21e74ddf8de1a21436da12e3e653065c5213e9d1", repo_type="dataset") as hub:
        code, _, err = run("prepare", "--dataset", "apps", "--endpoint", hub.url, "--output", str(out))
    assert code == 0, err
    (row,) = pq.read_table(out).to_pylist()
    assert row["data_source"] == "apps" and row["extra_info"]["source_id"] == "0"
    src = json.loads((tmp_path / "train.parquet.manifest.json").read_text())["sources"][0]
    assert [f["path"] for f in src["files"]] == ["train.jsonl"]
    assert (src["commit"], src["mutable"]) == ("21e74ddf8de1a21436da12e3e653065c5213e9d1", False)


def test_unknown_revision_is_one_line(online, run, tmp_path):
    repo = sources.gsm8k(tmp_path / "repo", [("a?", "1")], [("t?", "3")])
    with FakeHub(repo, "openai/gsm8k", COMMIT, repo_type="dataset") as hub:
        code, _, err = run("prepare", "--dataset", "gsm8k", "--endpoint", hub.url,
                           "--output", str(tmp_path / "o.parquet"))
    assert code == 2
    assert err == "grpo-data: gsm8k: revision 740312add88f781978c0658806c59bc2815b9866 not found in openai/gsm8k\n"
