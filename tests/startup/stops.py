"""Where a verl run on a machine without GPUs is allowed to end, and how an ending is read from its output.

Stdlib only (runs in the main test venv). The start-up tier runs the real `python -m verl.trainer.main_ppo`
against a Ray head that advertises GPUs it does not have; the run must get as far as the first call that
needs a GPU and end there. Every other ending (an ImportError, a config error, a hang, a clean exit) fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<func>\S+)\s*$')
EXC_LINE = re.compile(
    r"^(?:[\w.]+\.)?(?P<type>[A-Z]\w*(?:Error|Exception|Exit|Interrupt))(?:\([^)]*\))?: ?(?P<msg>.*)$"
)
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


@dataclass(frozen=True)
class StopPoint:
    """A call that needs a GPU: `caller` (verl, module + function) calls `callee` (torch, module + function),
    which raises `error_type` with a message matching `message`."""

    name: str
    caller: tuple[str, str]  # (module path suffix, function)
    callee: tuple[str, str]
    error_type: str
    message: str  # regular expression

    def describe(self) -> str:
        return (f"{self.name}: {'/'.join(self.caller)} -> {'/'.join(self.callee)} "
                f"raises {self.error_type} /{self.message}/")


# verl 0.9.1: TrainingWorker.__init__ (verl/workers/engine_workers.py), built by ActorRolloutRefWorker.init_model,
# first calls initialize_global_process_group_ray, which creates the process group with backend
# "cpu:gloo,cuda:nccl". A CPU-only torch has no NCCL, so this is the first GPU-only call on every path.
NCCL_PROCESS_GROUP = StopPoint(
    name="NCCL process-group creation",
    caller=("verl/utils/distributed.py", "initialize_global_process_group_ray"),
    callee=("torch/distributed/distributed_c10d.py", "init_process_group"),
    error_type="RuntimeError",
    message=r"NCCL|CUDA|nccl",
)
# torch.cuda's lazy initialisation (set_device, current_device, ...), should a verl or torch release move it first.
CUDA_LAZY_INIT = StopPoint(
    name="first torch.cuda initialisation",
    caller=("verl/", ""),
    callee=("torch/cuda/__init__.py", "_lazy_init"),
    error_type="AssertionError",
    message=r"Torch not compiled with CUDA enabled",
)

# Transformer Engine loads cuDNN / cuBLAS / the CUDA runtime with ctypes when it is imported. verl 0.9.1's
# TaskRunnerV1.run imports the v1 trainer, whose engine registry imports peft, which imports TE when it is
# installed (peft.import_utils.is_te_pytorch_available). A machine without the CUDA libraries ends there, in the
# task runner, after Hydra, validate_config, Ray and the runner actor; before the workers are placed.
TE_CUDA_LIBRARY = StopPoint(
    name="Transformer Engine loading a CUDA library",
    caller=("verl/trainer/main_ppo.py", "run"),
    callee=("transformer_engine/common/__init__.py", "_load_cuda_library"),
    error_type="RuntimeError",
    message=r"(cudnn|cublas|cudart|nvrtc|curand|nccl)\w* shared object not found",
)

# The same import with the CUDA libraries on disk, but of another major version: the tier's torch 2.13.0 is a CUDA 13
# build (its nvidia-* wheels carry libcublas.so.13, ...), while the only Transformer Engine core wheel of 2.20.2 on
# PyPI is built for CUDA 12 and links libcublas.so.12. Found cuDNN, TE then fails loading its own core library.
TE_CORE_LIBRARY = StopPoint(
    name="Transformer Engine loading its core library against CUDA 12",
    caller=("verl/trainer/main_ppo.py", "run"),
    callee=("transformer_engine/common/__init__.py", "_load_core_library"),
    error_type="OSError",
    message=r"lib(cudnn|cublas|cublasLt|cudart|nvrtc|curand|nccl)\w*\.so\.12: cannot open shared object file",
)


@dataclass(frozen=True)
class Traceback:
    frames: tuple[tuple[str, str], ...]  # (file, function), outermost first
    exc_type: str
    message: str


def parse_tracebacks(text: str) -> list[Traceback]:
    """Every Python traceback in `text` (including the remote ones Ray and Hydra print inside their own)."""
    out: list[Traceback] = []
    frames: list[tuple[str, str]] | None = None
    for line in text.splitlines():
        if line.strip().startswith("Traceback (most recent call last):"):
            frames = []
            continue
        match = FRAME.match(line)
        if match:
            # Ray prints a remote traceback's frames right after its RayTaskError line, without a header.
            frames = [] if frames is None else frames
            frames.append((match["file"], match["func"]))
            continue
        if frames is None:
            continue
        exc = EXC_LINE.match(line.strip())
        if exc and frames:
            out.append(Traceback(tuple(frames), exc["type"], exc["msg"]))
            frames = None
    return out


def _has(frames: tuple[tuple[str, str], ...], where: tuple[str, str]) -> int:
    """Index of the innermost frame in module `where[0]` (suffix or package prefix) and function `where[1]`."""
    module, func = where
    for i in range(len(frames) - 1, -1, -1):
        file, name = frames[i]
        in_module = file.endswith(module) if module.endswith(".py") else f"/{module}" in file
        if in_module and (not func or name == func):
            return i
    return -1


def match_stop(tb: Traceback, stop: StopPoint) -> bool:
    caller = _has(tb.frames, stop.caller)
    callee = _has(tb.frames, stop.callee)
    return (0 <= caller < callee and tb.exc_type == stop.error_type
            and re.search(stop.message, tb.message) is not None)


def judge(text: str, allowed: tuple[StopPoint, ...]) -> tuple[StopPoint | None, str]:
    """(the stop point reached, "") or (None, why the ending is not allowed)."""
    tracebacks = parse_tracebacks(text)
    imports = [tb for tb in tracebacks if tb.exc_type in IMPORT_ERRORS]
    if imports:
        tb = imports[0]
        return None, f"import failed (never an allowed stop): {tb.exc_type}: {tb.message} at {tb.frames[-1]}"
    for tb in tracebacks:
        for stop in allowed:
            if match_stop(tb, stop):
                return stop, ""
    if not tracebacks:
        return None, "the run ended without a Python traceback (no stop point reached)"
    last = tracebacks[-1]
    return None, (f"ended at {last.frames[-1][0]}:{last.frames[-1][1]} with {last.exc_type}: {last.message[:500]}"
                  f" (allowed: {'; '.join(s.describe() for s in allowed)})")
