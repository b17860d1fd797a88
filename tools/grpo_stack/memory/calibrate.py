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
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .model import GIB, Report

MILES_LINE = re.compile(r"Memory-Usage (?P<where>.*?)(?: \(cleared before print\))?: (?P<info>\{.*\})\s*$")


@dataclass(frozen=True)
class Logged:
    framework: str  # verl | miles
    peak_gib: float  # verl: the actor process's allocator peak; miles: the largest device-wide sample
    records: int  # step records (verl) or memory samples (miles) read
    reserved_gib: float | None = None
    prompt_mean: float | None = None  # the last step's prompt_length/mean (verl)
    response_mean: float | None = None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def read(path: Path) -> Logged | None:
    """The figures a verl step file or a miles log holds; None when it holds neither."""
    peaks, reserved, lengths, samples = [], [], (None, None), []
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
            m = MILES_LINE.search(line)
            if m:
                try:
                    info = ast.literal_eval(m.group("info"))
                except (ValueError, SyntaxError):
                    continue
                used = _number(info.get("used_GB")) if isinstance(info, dict) else None
                if used is not None:
                    samples.append(used)
    if peaks:
        return Logged("verl", max(peaks), len(peaks), max(reserved) if reserved else None, *lengths)
    if samples:
        return Logged("miles", max(samples), len(samples))
    return None


def predicted_gib(report: Report, framework: str) -> float:
    """The model's figure for what `framework` logs: verl's actor peak (trainer phases, allocator terms only), or
    the device's peak phase (miles' samples are device-wide)."""
    if framework == "verl":
        return max(p.allocated for p in report.phases if p.name in ("log-prob", "train")) / GIB
    return report.peak.total / GIB


def as_text(report: Report, logged: Logged) -> str:
    predicted = predicted_gib(report, logged.framework)
    error = 100 * (predicted / logged.peak_gib - 1) if logged.peak_gib else float("nan")
    what = ("perf/max_memory_allocated_gb, the actor process's allocator peak" if logged.framework == "verl" else
            "the largest Memory-Usage used_GB, a device-wide sample: a floor of the peak")
    lines = [f"\nmeasured ({logged.framework}, {what}, over {logged.records} records): {logged.peak_gib:.1f} GiB; "
             f"predicted {predicted:.1f} GiB ({error:+.0f} %)"]
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
    predicted = predicted_gib(report, logged.framework)
    return {"framework": logged.framework, "records": logged.records, "peak_gib": round(logged.peak_gib, 3),
            "reserved_gib": logged.reserved_gib, "predicted_gib": round(predicted, 3),
            "error": round(predicted / logged.peak_gib - 1, 4) if logged.peak_gib else None,
            "prompt_length_mean": logged.prompt_mean, "response_length_mean": logged.response_mean}
