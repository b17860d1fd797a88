"""grpo-render is Helm's engine plus the job builder: same objects as Helm, `helm -f` merging, exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).with_name("grpo-render")


def grpo_render(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=120)


def canonical(objects) -> list[str]:
    return sorted(json.dumps(o, sort_keys=True) for o in objects if o)


def helm_objects(values: dict, release: str, namespace: str) -> list[str]:
    import helm_python
    from grpo_stack.paths import CHART_DIR

    helm_python.disable_logging()
    out = helm_python.Chart.load(str(CHART_DIR)).render(values, name=release, namespace=namespace, is_install=True)
    return canonical(d for t, text in out.items() if not t.endswith("NOTES.txt") for d in yaml.safe_load_all(text))


def test_output_equals_helm(values_name):
    from grpo_stack.values import load_values_file, merge_user_values

    path = REPO_ROOT / "values" / f"{values_name}.yaml"
    proc = grpo_render(str(path), "--release", "grpo", "--namespace", "team-a")
    assert proc.returncode == 0, proc.stderr
    expected = helm_objects(merge_user_values([load_values_file(path)]), "grpo", "team-a")
    assert canonical(yaml.safe_load_all(proc.stdout)) == expected


def test_output_dir_one_file_per_object(tmp_path):
    path = REPO_ROOT / "values" / "qwen3-235b.yaml"
    stream = grpo_render(str(path), "--namespace", "team-a")
    written = grpo_render(str(path), "--namespace", "team-a", "-o", str(tmp_path / "out"))
    assert stream.returncode == written.returncode == 0, written.stderr
    files = sorted((tmp_path / "out").iterdir())
    objects = [o for o in yaml.safe_load_all(stream.stdout) if o]
    assert len(files) == len(objects)
    per_file = [list(yaml.safe_load_all(f.read_text())) for f in files]
    assert all(len(docs) == 1 for docs in per_file)
    assert canonical(d[0] for d in per_file) == canonical(objects)


def _objects(stdout: str) -> list[dict]:
    return [o for o in yaml.safe_load_all(stdout) if o]


def test_values_files_merge_like_helm(tmp_path):
    """`helm -f a -f b`: later wins, maps merge deeply, lists are replaced."""
    override = tmp_path / "override.yaml"
    override.write_text(yaml.safe_dump({"global": {"cluster": {"nodes": 2},
                                                   "job": {"data": {"trainFiles": ["data/other/train.parquet"]}}},
                                        "raycluster": {"nccl": {"debug": "INFO"}}}))
    proc = grpo_render("-f", str(REPO_ROOT / "values" / "qwen3-8b.yaml"), str(override), "--namespace", "team-a")
    assert proc.returncode == 0, proc.stderr
    objects = _objects(proc.stdout)
    cluster = next(o for o in objects if o["kind"] == "RayCluster")
    worker = cluster["spec"]["workerGroupSpecs"][0]
    assert worker["replicas"] == 2
    assert worker["template"]["spec"]["nodeSelector"]["node.kubernetes.io/instance-type"] == "p5en.48xlarge"
    env = {e["name"]: e.get("value") for e in worker["template"]["spec"]["containers"][0]["env"]}
    assert env["NCCL_DEBUG"] == "INFO"
    job = json.loads(next(o for o in objects if "job.json" in (o.get("data") or {}))["data"]["job.json"])
    assert job["job"]["data"]["trainFiles"] == ["data/other/train.parquet"]
    assert job["job"]["data"]["valFiles"] == ["data/gsm8k/test.parquet"]


def test_release_and_namespace_reach_every_object():
    proc = grpo_render(str(REPO_ROOT / "values" / "qwen3-235b.yaml"), "--release", "exp7", "--namespace", "ns-x")
    assert proc.returncode == 0, proc.stderr
    objects = _objects(proc.stdout)
    assert objects
    for o in objects:
        meta = o["metadata"]
        assert meta["namespace"] == "ns-x", (o["kind"], meta["name"])
        assert meta["labels"]["app.kubernetes.io/instance"] == "exp7", (o["kind"], meta["name"])
        assert meta["name"].startswith("exp7-"), (o["kind"], meta["name"])


def _keys(argv: list[str]) -> list[str]:
    """Hydra overrides (key=value) for verl; --flags for miles."""
    return [a.split("=", 1)[0].lstrip("+~") for a in argv if "=" in a and not a.startswith("-")] + \
        [a.split("=", 1)[0] for a in argv if a.startswith("--")]


def test_job_emits_each_key_once(values_name):
    """review 000: ppo_mini_batch_size emitted twice; Hydra silently applies the last one."""
    proc = grpo_render(str(REPO_ROOT / "values" / f"{values_name}.yaml"), "--job", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    keys = _keys(json.loads(proc.stdout)["argv"])
    assert keys
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicates, duplicates


@pytest.mark.parametrize("content", [
    "global: [unclosed\n",
    "global:\n  job:\n    trainr: {}\n",
    "- just\n- a list\n",
], ids=["invalid-yaml", "schema-violation", "not-a-mapping"])
def test_bad_values_file_exits_2_with_one_line(content, tmp_path):
    """A bad file is a one-line, file-named error, never a traceback."""
    bad = tmp_path / "bad-values.yaml"
    bad.write_text(content)
    proc = grpo_render("-f", str(REPO_ROOT / "values" / "qwen3-8b.yaml"), str(bad))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad-values.yaml" in lines[0], proc.stderr


def test_missing_values_file_exits_2(tmp_path):
    proc = grpo_render(str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2 and "nope.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_render_is_reentrant(shipped_values):
    """grpo_stack.render.render() must not depend on what it rendered before in the same process: helm_python
    prunes disabled subcharts from a loaded chart, so a reused chart loses objects for a later values file."""
    from grpo_stack.render import RenderError, render

    fresh = canonical(o.obj for o in render(shipped_values["qwen3-235b"], namespace="team-a").objects)
    render(shipped_values["qwen3-8b"], namespace="team-a")  # disables sandbox, vllm, lm-eval
    try:
        after = canonical(o.obj for o in render(shipped_values["qwen3-235b"], namespace="team-a").objects)
    except RenderError as exc:
        pytest.fail(f"second render in one process failed: {exc}")
    assert after == fresh
