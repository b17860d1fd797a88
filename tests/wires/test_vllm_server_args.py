"""The chart's vLLM Deployment -> vLLM: its container args and env, as rendered for every shipped values file's
evaluation release, through vLLM's own `vllm serve` command line (tests/wires/vllm_serve_contract.py, in the start-up
venv, whose vLLM is the version the chart serves).

vLLM's own parser and subcommand validation read the args (the image's ENTRYPOINT is `vllm serve`); vLLM's own
`AsyncEngineArgs.from_cli_args` must then hold what the values say (model directory, served name, tensor parallel,
context, memory share, eager mode) and its own `validate_environ(hard_fail=True)` must accept every VLLM_ variable
of the container. Three mutations of one container must be refused there: a misspelt flag, a value of the wrong type
and a misspelt VLLM_ variable (vLLM itself would start with the first two refused and the third only warned about).
Where it stops: the parser's device-dependent defaults are those of vLLM's CPU platform (no GPU here);
`create_engine_config` (the model's config.json, the device) and the server do not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.catalog.images import IMAGES
from grpo_stack.render import merged_values, render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import VALUES_FILES
from tests.wires.tiers import startup_python

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OVERLAY = REPO / "values" / "eval" / "eval.yaml"
VLLM_CHART_VALUES = REPO / "charts/grpo-stack/charts/vllm/values.yaml"


def _server(path: Path) -> tuple[dict, dict]:
    """(the vllm subchart's values as an install coalesces them, the vllm container) of `path`'s evaluation
    release."""
    user = merge_user_values([load_values_file(path), load_values_file(OVERLAY)])
    rendered = render(user, release="grpo-eval", namespace="ns")
    (deploy,) = [o.obj for o in rendered.of_kind("Deployment") if o.name.endswith("-vllm")]
    return merged_values(user)["vllm"], deploy["spec"]["template"]["spec"]["containers"][0]


def _case(container: dict) -> dict:
    env = {e["name"]: str(e["value"]) for e in container.get("env") or [] if "value" in e}
    return {"args": [str(a) for a in container["args"]], "env": env}


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    servers = {p.stem: _server(p) for p in VALUES_FILES}
    first = _case(next(iter(servers.values()))[1])
    mutants = {
        "misspelt flag": {**first, "args": [*first["args"], "--max-model-length=4096"]},
        "wrong type": {**first, "args": [*first["args"], "--tensor-parallel-size=eight"]},
        "misspelt env": {**first, "env": {**first["env"], "VLLM_EXECUTE_MODEL_TIMEOUT": "60"}},
    }
    cases = [_case(c) for _, c in servers.values()] + list(mutants.values())
    out = tmp_path_factory.mktemp("vllm-serve") / "verdict.json"
    # Only what a process needs to run: the container's own env is set per case by the contract, and nothing of
    # this session (other tiers set HF_HUB_OFFLINE=1 for their own Hub-free runs) leaks into vLLM.
    base = {k: os.environ[k] for k in ("PATH", "HOME", "TMPDIR", "LANG") if k in os.environ}
    proc = subprocess.run([str(startup_python()), str(HERE / "vllm_serve_contract.py"), str(out)],
                          input=json.dumps({"cases": cases}), capture_output=True, text=True, timeout=600, env=base)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(out.read_text())
    print(f"checked {len(servers)} vLLM Deployments with vllm {found['vllm']}'s own CLI", file=sys.stderr)
    reports = found["cases"]
    assert len(reports) == len(cases), found
    by_file = {name: (server, report) for (name, server), report in zip(servers.items(), reports, strict=False)}
    return found["vllm"], by_file, dict(zip(mutants, reports[len(servers):], strict=True))


def test_vllm_takes_every_shipped_server_command_as_the_values_say(verdict):
    _version, by_file, _ = verdict
    for name, ((values, container), report) in by_file.items():
        assert report["exit"] == 0 and not report["error"], (name, report)
        assert report["warnings"] == [], (name, report["warnings"])  # e.g. "--model will be removed"
        served = next(a.split("=", 1)[1] for a in container["args"] if a.startswith("--served-model-name="))
        engine = report["engine"]
        assert engine["model"] == "/model", name
        assert engine["served_model_name"] == [served], name
        assert engine["tensor_parallel_size"] == values["tensorParallel"], name
        assert engine["max_model_len"] == values["maxModelLen"], name
        assert engine["gpu_memory_utilization"] == pytest.approx(values["gpuMemoryUtilization"]), name
        assert engine["enforce_eager"] is bool(values.get("enforceEager")), name
        assert report["api"]["port"] == container["ports"][0]["containerPort"], name


def test_vllm_refuses_a_misspelt_flag_a_wrong_type_and_a_misspelt_variable(verdict):
    _, _, mutants = verdict
    assert {name: r["exit"] for name, r in mutants.items()} == dict.fromkeys(mutants, 2), mutants
    assert "VLLM_EXECUTE_MODEL_TIMEOUT" in mutants["misspelt env"]["error"]


def test_the_chart_serves_the_vllm_that_checked_it(verdict):
    """One vLLM across the stack: the chart's server image, the verl image's base (its rollout engine) and the
    start-up venv whose parser and request models check the chart are one version."""
    version = verdict[0]
    tag = yaml.safe_load(VLLM_CHART_VALUES.read_text())["image"]["tag"]
    engines = {i.rollout_engine_version for i in IMAGES.values() if i.rollout_engine == "vllm"}
    assert tag == f"v{version}" and engines == {version}, (tag, version, engines)
