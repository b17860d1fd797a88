"""Seconds-long probes, one per adjustment of tests/loop/verl_cpu.py (and the env entries it relies on), run in the
loop venv: `bare` reproduces the failure the adjustment answers, `plugin` shows the adjustment removes it.

    python cpu_probes.py bare|plugin    -> JSON {probe: {"ok": bool, "detail": str}}

`plugin` runs with VERL_USE_EXTERNAL_MODULES=verl_cpu, VERL_PLATFORM=cpu, VERL_ENGINE_DEVICE=cuda and tests/loop on
PYTHONPATH (tests/loop/test_cpu_probes.py sets them, as the loop's Ray head does).
"""

from __future__ import annotations

import json
import socket
import sys
import traceback
import warnings

warnings.filterwarnings("ignore")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_backend(plugin: bool) -> str:
    """verl/utils/distributed.py:89: backend f"cpu:gloo,{device}:{backend}" on the cpu platform."""
    import torch.distributed as dist

    dist.init_process_group("cpu:gloo,cpu:gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{_port()}")
    dist.destroy_process_group()
    return "a process group on cpu:gloo,cpu:gloo"


def probe_device_id(plugin: bool) -> str:
    """verl/utils/fsdp_utils.py:507: `.to(get_device_id())`; bare, verl's platforms give an int (cuda:0)."""
    import torch

    device = _platform().current_device() if plugin else 0
    return str(torch.zeros(1).to(device).device)


def probe_memory_stats(plugin: bool) -> str:
    """verl/utils/memory_utils.py:47: get_torch_device().memory_reserved(); bare, the device module is torch.cpu."""
    import torch

    module = _platform().device_module if plugin else torch.cpu
    return f"memory_reserved() = {module.memory_reserved()}"


def probe_pinned_offload(plugin: bool) -> str:
    """verl/workers/engine/fsdp/transformer_impl.py:462 gives the reference model CPUOffloadPolicy(pin_memory=True);
    FSDP2 pins its host copies with it."""
    import inspect

    import torch
    from verl.workers.engine.fsdp import transformer_impl

    assert "CPUOffloadPolicy(pin_memory=True)" in inspect.getsource(transformer_impl), "verl no longer pins"
    policy = transformer_impl.CPUOffloadPolicy(pin_memory=True)
    tensor = torch.zeros(4)
    if policy.pin_memory:
        tensor = tensor.pin_memory()
    return f"pin_memory={policy.pin_memory}"


def probe_engine_lookup(plugin: bool) -> str:
    """verl/workers/engine/base.py:405 looks the engine up by device; the FSDP engine is registered for cuda and
    npu only (transformer_impl.py:1143), so the cpu platform's own key finds none. VERL_ENGINE_DEVICE (the loop
    sets cuda) chooses the key."""
    from verl.workers.engine import EngineRegistry

    if not plugin:  # what the lookup meets on the cpu platform without VERL_ENGINE_DEVICE
        registered = EngineRegistry._engines["language_model"]["fsdp2"]
        known = sorted(map(str, registered))
        assert "cpu" in registered, f"No engine registered for device='cpu' (registered: {known})"
        return "registered for cpu"
    return EngineRegistry.get_engine_cls("language_model", "fsdp2").__name__


def probe_vllm_version(plugin: bool) -> str:
    """verl/utils/vllm/vllm_quant_utils.py:67 reads importlib.metadata.version("vllm")."""
    import importlib.metadata

    return importlib.metadata.version("vllm")


NOT_ON_THIS_CPU = "not on this CPU: "  # a probe whose failure needs hardware this machine lacks


def probe_onednn_packing(plugin: bool) -> str:
    """vllm/model_executor/layers/utils.py dispatch_cpu_unquantized_gemm(layer, remove_weight=True) (linear.py:215):
    with oneDNN the weight is packed and freed, and verl's weight sync cannot load into it. vLLM packs only where
    this CPU and its build allow (oneDNN, or the sgl kernels); elsewhere it falls back to torch's linear and keeps
    the weight, and there is no failure to reproduce: said as NOT_ON_THIS_CPU, never as "fixed upstream"."""
    import torch
    from vllm import _custom_ops as ops
    from vllm.model_executor.layers import utils

    packed = []
    create = ops.create_onednn_mm

    def counting(*args, **kwargs):
        handler = create(*args, **kwargs)
        packed.append("oneDNN")
        return handler

    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(torch.randn(64, 64, dtype=torch.bfloat16), requires_grad=False)
    ops.create_onednn_mm = counting
    try:
        utils.dispatch_cpu_unquantized_gemm(layer, remove_weight=True)
    finally:
        ops.create_onednn_mm = create
    assert layer.weight.numel() == 64 * 64, f"the weight was freed: shape {tuple(layer.weight.shape)}"
    if not packed and not plugin:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "?")
        return (f"{NOT_ON_THIS_CPU}vLLM packed nothing on {model} (oneDNN supported: {ops._supports_onednn}); "
                "it used torch's linear, which keeps the weight")
    return "the live weight is kept"


def _platform():
    from verl.plugin.platform import get_platform

    return get_platform()


PROBES = {name.removeprefix("probe_"): fn for name, fn in dict(globals()).items() if name.startswith("probe_")}


def main(argv: list[str]) -> int:
    plugin = argv[0] == "plugin"
    if plugin:
        import verl  # noqa: F401 -- loads the plugin through VERL_USE_EXTERNAL_MODULES
    out = {}
    for name, fn in PROBES.items():
        try:
            out[name] = {"ok": True, "detail": fn(plugin)}
        except Exception as exc:  # noqa: BLE001 -- each probe's failure is its result
            out[name] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:400],
                         "where": traceback.format_exc(limit=-1)[-300:]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
