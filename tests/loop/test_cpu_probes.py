"""Each adjustment of the CPU plugin (tests/loop/verl_cpu.py) and each env entry it relies on, probed in seconds:
without the plugin the failure it answers happens (so a verl or vLLM upgrade that removes the failure makes the
adjustment visibly unnecessary), with it the failure is gone (an upgrade that breaks the adjustment fails here
before the loop does)."""

from __future__ import annotations

import json
import subprocess

import pytest

from .cpu_probes import NOT_ON_THIS_CPU
from .harness import HERE, clean_env, loop_python

pytestmark = pytest.mark.loop

# probe -> what the failure says without the plugin
FAILURES = {
    "backend": "Duplicate device type cpu",
    "device_id": "Found no NVIDIA driver",
    "memory_stats": "has no attribute 'memory_reserved'",
    "pinned_offload": "Found no NVIDIA driver",
    "engine_lookup": "No engine registered for device='cpu'",
    "vllm_version": "No package metadata was found for vllm",
    "onednn_packing": "the weight was freed",
}
PLUGIN_ENV = {"VERL_USE_EXTERNAL_MODULES": "verl_cpu", "VERL_PLATFORM": "cpu", "VERL_ENGINE_DEVICE": "cuda",
              "PYTHONPATH": str(HERE)}


def run_probes(mode: str) -> dict:
    env = clean_env() | (PLUGIN_ENV if mode == "plugin" else {})
    out = subprocess.run([str(loop_python()), str(HERE / "cpu_probes.py"), mode], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def bare():
    return run_probes("bare")


@pytest.fixture(scope="module")
def plugged():
    return run_probes("plugin")


@pytest.mark.parametrize("probe", sorted(FAILURES))
def test_the_failure_happens_without_the_plugin(bare, probe):
    if bare[probe]["ok"] and bare[probe]["detail"].startswith(NOT_ON_THIS_CPU):
        pytest.skip(f"{probe}: {bare[probe]['detail']}")
    assert not bare[probe]["ok"], f"{probe}: no longer fails upstream ({bare[probe]['detail']}); drop the adjustment"
    assert FAILURES[probe] in bare[probe]["detail"], bare[probe]


@pytest.mark.parametrize("probe", sorted(FAILURES))
def test_the_plugin_removes_it(plugged, probe):
    assert plugged[probe]["ok"], plugged[probe]


def test_every_probe_is_listed(bare):
    assert set(bare) == set(FAILURES)
