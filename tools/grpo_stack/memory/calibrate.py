"""A run's own memory and length figures read back from its log, set beside the model's prediction for the same
values: what `grpo-render --job --memory --from-log LOG` prints.

What each framework logs (read from their source, not guessed):
- verl's `file` tracker (one JSON record a step, verl/utils/tracking.py FileLogger) carries
  `perf/max_memory_allocated_gb` and `perf/max_memory_reserved_gb`: torch's peak in the actor process, in GiB
  (bytes / 1024**3, verl/workers/engine_workers.py L219-220, verl 0.9.1). The rollout engine runs in its own
  process, so the figure is compared with the trainer's phases (log-prob, train) without the margins the allocator
  does not see. The same records carry `prompt_length/mean` and `response_length/mean`.
- miles logs no peak; its `Memory-Usage <where>: {...}` lines (miles/utils/memory_utils.py print_memory) sample
  the whole device (`used_GB` = total - free, every process on the GPU) at points of the step. Their largest is a
  floor of the device's peak, compared with the model's peak phase.
- vLLM (0.24, verl's rollout engine) logs its CUDA-graph pool once captured: "Graph capturing finished in N secs,
  took X GiB" and "CUDA graph pool memory: X GiB (actual), Y GiB (estimated)" (vllm/v1/worker/gpu_model_runner.py
  L6654-6658, gpu_worker.py L667-669), in the job's driver log. No rule sizes the pool before capture, so the model
  counts it only as logged: inside vLLM's share, and on the GPU through the trainer's phases (sleep keeps it).
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

from .model import GIB, Report, estimate

MILES_LINE = re.compile(r"Memory-Usage (?P<where>.*?)(?: \(cleared before print\))?: (?P<info>\{.*\})\s*$")
VLLM_GRAPHS = re.compile(r"Graph capturing finished in \d+ secs?, took (?P<gib>[0-9.]+) GiB"
                         r"|CUDA graph pool memory: (?P<actual>[0-9.]+) GiB \(actual\)")


@dataclass(frozen=True)
class Logged:
    framework: str  # verl | miles | "" (only vLLM's graph pool was logged)
    peak_gib: float  # verl: the actor process's allocator peak; miles: the largest device-wide sample
    records: int  # step records (verl) or memory samples (miles) read
    reserved_gib: float | None = None
    prompt_mean: float | None = None  # the last step's prompt_length/mean (verl)
    response_mean: float | None = None
    graph_pool_gib: float | None = None  # vLLM's CUDA-graph pool, the largest any rank logged


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def read(*paths: Path) -> Logged | None:
    """The figures a verl step file, a miles log and a driver log with vLLM's lines hold (one or several files);
    None when they hold none of them."""
    peaks, reserved, lengths, samples, graphs = [], [], (None, None), [], []
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lstrip().startswith("{"):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                    data = record.get("data") if isinstance(record, dict) else None
                    if isinstance(data, dict) and _number(data.get("perf/max_memory_allocated_gb")) is not None:
                        peaks.append(_number(data["perf/max_memory_allocated_gb"]))
                        if _number(data.get("perf/max_memory_reserved_gb")) is not None:
                            reserved.append(_number(data["perf/max_memory_reserved_gb"]))
                        lengths = (_number(data.get("prompt_length/mean")), _number(data.get("response_length/mean")))
                    continue
                graph = VLLM_GRAPHS.search(line)
                if graph:
                    gib = _number(float(graph.group("gib") or graph.group("actual")))
                    graphs += [gib] if gib is not None else []
                    continue
                m = MILES_LINE.search(line)
                if m:
                    try:
                        info = ast.literal_eval(m.group("info"))
                    except (ValueError, SyntaxError):
                        continue
                    used = _number(info.get("used_GB")) if isinstance(info, dict) else None
                    if used is not None:
                        samples.append(used)
    pool = max(graphs) if graphs else None
    if peaks:
        return Logged("verl", max(peaks), len(peaks), max(reserved) if reserved else None, *lengths,
                      graph_pool_gib=pool)
    if samples:
        return Logged("miles", max(samples), len(samples), graph_pool_gib=pool)
    return Logged("", 0.0, 0, graph_pool_gib=pool) if pool is not None else None


def with_graph_pool(report: Report, logged: Logged) -> Report | None:
    """The estimate again with vLLM's logged graph pool counted (in its share, and asleep beside the trainer);
    None when the run's engine captures no vLLM graphs or none was logged."""
    run = report.run
    if logged.graph_pool_gib is None or run.rollout != "vllm" or not run.rollout_graphs:
        return None
    return estimate(replace(run, rollout_graph_pool=logged.graph_pool_gib * GIB))


# The phases verl's trainer process runs: the actor's passes and, on a colocated GPU, the critic's (verl fuses the
# roles of a resource pool into one worker process).
TRAINER_PROCESS_PHASES = ("log-prob", "train", "critic-values", "critic-update")


def predicted_gib(report: Report, framework: str) -> float:
    """The model's figure for what `framework` logs: verl's actor peak (trainer phases, allocator terms only), or
    the device's peak phase (miles' samples are device-wide)."""
    if framework == "verl":
        return max(p.allocated for p in report.phases if p.name in TRAINER_PROCESS_PHASES) / GIB
    return report.peak.total / GIB


def as_text(report: Report, logged: Logged) -> str:
    lines = [""]
    if logged.framework:
        predicted = predicted_gib(report, logged.framework)
        error = 100 * (predicted / logged.peak_gib - 1) if logged.peak_gib else float("nan")
        what = ("perf/max_memory_allocated_gb, the actor process's allocator peak" if logged.framework == "verl"
                else "the largest Memory-Usage used_GB, a device-wide sample: a floor of the peak")
        lines.append(f"measured ({logged.framework}, {what}, over {logged.records} records): "
                     f"{logged.peak_gib:.1f} GiB; predicted {predicted:.1f} GiB ({error:+.0f} %)")
    graphs = with_graph_pool(report, logged)
    if graphs is not None:
        lines.append(f"  vLLM's CUDA-graph pool: {logged.graph_pool_gib:.2f} GiB logged; counted in its share and "
                     f"asleep beside the trainer, the peak is {graphs.peak.name} {graphs.peak.total / GIB:.1f} GiB "
                     f"({100 * graphs.fraction(graphs.peak):.0f} % of the GPU; without it "
                     f"{report.peak.total / GIB:.1f} GiB){' : OVER the GPU' if graphs.oom else ''}")
    elif logged.graph_pool_gib is not None:
        lines.append(f"  vLLM's CUDA-graph pool: {logged.graph_pool_gib:.2f} GiB logged; this run's engine "
                     "captures none (enforce_eager) or is not vLLM")
    if logged.reserved_gib is not None:
        lines.append(f"  reserved by the allocator: {logged.reserved_gib:.1f} GiB")
    stated = {k: round(v) for k, v in (("meanPrompt", logged.prompt_mean), ("meanResponse", logged.response_mean))
              if v is not None}
    if stated:
        current = report.run.mean_seq_len
        lines.append(f"  the data's lengths in this run: {stated}; the model took "
                     f"{'every sample at its longest' if current is None else f'{current} tokens per sample'}: "
                     "for the next run of this shape state them as global.job.lengths "
                     f"{{{', '.join(f'{k}: {v}' for k, v in stated.items())}}}")
    return "\n".join(lines)


def as_dict(report: Report, logged: Logged) -> dict:
    predicted = predicted_gib(report, logged.framework) if logged.framework else None
    graphs = with_graph_pool(report, logged)
    return {"framework": logged.framework or None, "records": logged.records,
            "peak_gib": round(logged.peak_gib, 3) if logged.framework else None,
            "reserved_gib": logged.reserved_gib, "predicted_gib": round(predicted, 3) if predicted else None,
            "error": round(predicted / logged.peak_gib - 1, 4) if predicted and logged.peak_gib else None,
            "prompt_length_mean": logged.prompt_mean, "response_length_mean": logged.response_mean,
            "graph_pool_gib": logged.graph_pool_gib,
            "peak_with_graph_pool_gib": round(graphs.peak.total / GIB, 3) if graphs else None}
