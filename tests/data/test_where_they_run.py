"""Where grpo-data and grpo-models run: the fsx-utils image carries exactly this version of the tools (its
readiness probe proves it), and NOTES step 2 prints commands that the tools accept and that, run here against
sources written in their real layout, produce the files the values name."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from importlib.metadata import distribution
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from ..conftest import NAMESPACE, RELEASE
from ..models.modeldir import make_model
from . import sources

REPO = Path(__file__).resolve().parents[2]
FSX_CHART = REPO / "charts" / "grpo-stack" / "charts" / "fsx-utils"
TOOLS_VERSION = tomllib.loads((REPO / "tools" / "pyproject.toml").read_text())["project"]["version"]
BIN = Path(sys.executable).parent


def _fsx(rendered) -> dict:
    (d,) = [o.obj for o in rendered.of_kind("Deployment") if o.name.endswith("-fsx-utils")]
    return d


def test_chart_image_and_tools_share_one_version():
    """The probe expects the subchart's appVersion; the image tag and the tools package must be that version."""
    chart = yaml.safe_load((FSX_CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((FSX_CHART / "values.yaml").read_text())
    assert chart["appVersion"] == TOOLS_VERSION == values["image"]["tag"]
    assert values["image"]["repository"] == "grpo-stack/fsx-utils"


def test_pod_installs_nothing_and_is_ready_only_on_this_version(values_name, rendered_all, tmp_path):
    """The predecessor's pod was Ready before pip finished and installed unpinned packages; this one installs
    nothing and its readiness probe is the tools reporting the chart's version (run here: 0 on it, 1 off it)."""
    c = _fsx(rendered_all[values_name])["spec"]["template"]["spec"]["containers"][0]
    assert c["command"] == ["sleep", "infinity"] and "args" not in c
    assert not re.search(r"\bpip3?\b", yaml.safe_dump(c))
    probe = c["readinessProbe"]["exec"]["command"]
    assert probe == ["grpo-data", "version", "--expect", TOOLS_VERSION]
    assert c["readinessProbe"]["timeoutSeconds"] >= 10
    ok = subprocess.run([str(BIN / probe[0]), *probe[1:]], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    stale = subprocess.run([str(BIN / probe[0]), *probe[1:-1], "0.0.9"], capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1 and f"installed tools are {TOOLS_VERSION}, this release needs 0.0.9" in stale.stderr
    assert c["env"][0]["name"] == "HF_TOKEN" and "secretKeyRef" in c["env"][0]["valueFrom"]


def test_image_pins_the_whole_dependency_closure():
    """Every distribution the installed tools need, transitively, is pinned in the image at the version tested
    here; the Dockerfile installs with --no-deps so nothing else can enter."""
    pinned = {}
    for line in (REPO / "images" / "fsx-utils" / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9.+!-]*", line), line
            name, _, ver = line.partition("==")
            pinned[_norm(name)] = ver
    seen, todo = set(), [Requirement(r) for r in distribution("grpo-stack").requires or []]
    while todo:
        req = todo.pop()
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        name = _norm(req.name)
        if name in seen:
            continue
        seen.add(name)
        dist = distribution(req.name)
        assert pinned.get(name) == dist.version, f"{req.name}: image pins {pinned.get(name)}, tested {dist.version}"
        todo += [Requirement(r) for r in dist.requires or []]
    assert {"datasets", "pyarrow", "huggingface-hub", "safetensors", "tqdm"} <= seen
    dockerfile = (REPO / "images" / "fsx-utils" / "Dockerfile").read_text()
    assert "--no-deps --requirement /tmp/requirements.txt" in dockerfile
    assert "COPY tools /opt/grpo-stack/tools" in dockerfile
    assert "pip install --no-cache-dir --no-deps /opt/grpo-stack/tools" in dockerfile


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _notes_commands(rendered) -> list[list[str]]:
    prefix = f"kubectl -n {NAMESPACE} exec deploy/{RELEASE}-fsx-utils -- "
    lines = [ln.strip() for ln in rendered.notes.splitlines() if ln.strip().startswith(prefix)]
    return [shlex.split(ln[len(prefix):]) for ln in lines]


def _flag(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]


def test_notes_step2_commands_follow_the_values(values_name, rendered_all, shipped_values):
    """Model path, data paths and revisions in the printed commands are this release's values, and each command
    parses with the tool it names."""
    from grpo_stack.cli.data import parser as data_parser
    from grpo_stack.cli.models import parser as models_parser

    r = rendered_all[values_name]
    v = shipped_values[values_name]
    job = v["global"]["job"]
    mount = "/fsx"  # global.storage.mountPath: the chart default, which no shipped file overrides
    assert "storage" not in v["global"] or "mountPath" not in v["global"]["storage"]
    cmds = _notes_commands(r)
    assert [c[:2] for c in cmds] == [["grpo-models", "stage"], ["grpo-data", "prepare"], ["grpo-data", "holdout"],
                                     ["grpo-models", "verify"]]
    stage, prepare, holdout, verify = cmds
    model_dir = f"{mount}/{job['model']['path']}"
    assert _flag(stage, "--dest") == [model_dir] and verify[2:] == [model_dir]
    fx = v.get("fsx-utils", {})
    if fx.get("model", {}).get("revision"):
        assert stage[2] == fx["model"]["repo"] and _flag(stage, "--revision") == [fx["model"]["revision"]]
        assert "Set fsx-utils.model.repo" not in r.notes
    else:
        assert _flag(stage, "--revision") == ["<commit>"] and "Set fsx-utils.model.repo" in r.notes
    train, val = f"{mount}/{job['data']['trainFiles'][0]}", f"{mount}/{job['data']['valFiles'][0]}"
    assert _flag(prepare, "--output") == [train]
    assert _flag(holdout, "--train") == [train] and _flag(holdout, "--output") == [val]
    want_train = fx.get("data", {}).get("train", ["gsm8k"])
    assert _flag(prepare, "--dataset") == want_train
    for argv in (prepare, holdout):
        data_parser().parse_args(argv[1:])
    for argv in (stage, verify):
        models_parser().parse_args(argv[1:])


def _on(mount: Path, argv: list[str]) -> list[str]:
    return [a.replace("/fsx/", f"{mount}/") for a in argv]


@pytest.mark.parametrize("shipped", ["qwen3-8b", "miles-qwen3-4b"])
def test_notes_step2_commands_run(shipped, rendered_all, shipped_values, tmp_path, capsys):
    """The printed commands, run as printed (the mount moved under tmp_path, the sources local), write the model
    directory and the training/validation files the job reads."""
    import json

    from grpo_stack.cli.data import main as data_main
    from grpo_stack.cli.models import main as models_main

    mount = tmp_path / "fsx"
    srcs = {
        "gsm8k": sources.gsm8k(tmp_path / "gsm8k", [("a?", "1"), ("b?", "2")], [("c?", "3"), ("d?", "4")]),
        "dapo-math-17k": sources.dapo(tmp_path / "dapo", [("x?", "1"), ("y?", "2")], repeat=3),
        "aime": sources.aime(tmp_path / "aime", [("z?", 5)]),
    }
    snapshot = make_model(tmp_path / "snapshot")
    stage, prepare, holdout, verify = _notes_commands(rendered_all[shipped])
    assert models_main([*_on(mount, stage[1:]), "--from-dir", str(snapshot), "--no-progress"]) == 0
    for argv in (prepare, holdout):
        extra = [f"--source-dir={n}={srcs[n]}" for n in _flag(argv, "--dataset")]
        assert data_main([*_on(mount, argv[1:]), *extra, "--cache-dir", str(tmp_path / "c"), "--no-progress"]) == 0
    assert models_main([*_on(mount, verify[1:]), "--no-progress"]) == 0
    capsys.readouterr()
    job = shipped_values[shipped]["global"]["job"]
    train, val = mount / job["data"]["trainFiles"][0], mount / job["data"]["valFiles"][0]
    assert train.is_file() and val.is_file()
    assert (mount / job["model"]["path"] / "grpo-model-manifest.json").is_file()
    assert json.loads(Path(f"{val}.manifest.json").read_text())["audit"][-1]["overlapping"] == 0
