"""Reading lm-eval output: `results_<date>.json` (aggregated) and `samples_<task>_<date>.jsonl` (--log_samples).

Nothing is defaulted: an absent metric or stderr stays None and is reported as missing; an unreadable or
malformed file, an unknown task id or a non-numeric value is bad input (EvalInputError, exit 2); a run directory
without results is missing data (MissingData, exit 1).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import printable
from .tasks import TASKS

MAX_FILE_BYTES = 512 * 2**20  # a results file is kilobytes; a samples file of a large benchmark tens of MB


class EvalInputError(Exception):
    """Input that cannot be read as lm-eval output, or two runs that cannot be compared (exit 2)."""


class MissingData(Exception):
    """A run, or a metric of it, is not there (exit 1)."""


@dataclass(frozen=True)
class Metric:
    value: float | None
    stderr: float | None


@dataclass
class TaskResult:
    task: str
    file: Path
    metrics: dict[str, Metric]
    n: int | None  # documents evaluated (n-samples.effective)
    settings: dict[str, Any]  # what makes two scores comparable: repeats, generation kwargs
    # metric key -> {doc_id: per-document score}, from the samples file; None when not logged
    per_doc: dict[str, dict[int, float]] | None = None


@dataclass
class RunResults:
    label: str
    path: Path
    tasks: dict[str, TaskResult] = field(default_factory=dict)


def load_run(path: Path, label: str) -> RunResults:
    """All lm-eval results below `path` (a results file or a directory lm-eval wrote into)."""
    if not path.exists():
        raise MissingData(f"{label} {path}: does not exist")
    files = [path] if path.is_file() else sorted(p for p in path.rglob("results_*.json") if p.is_file())
    if not files:
        raise MissingData(f"{label} {path}: no lm-eval results_*.json below it")
    run = RunResults(label, path)
    for f in files:
        for task, result in _load_results_file(f).items():
            if task in run.tasks:
                raise EvalInputError(f"{f}: task {task!r} is also reported by {run.tasks[task].file}; "
                                     "give the one results file to compare")
            run.tasks[task] = result
    return run


def _read(path: Path) -> str:
    try:
        if not path.is_file():
            raise EvalInputError(f"{path}: not a regular file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise EvalInputError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"{path}: cannot read: {exc}") from None


def _json(path: Path, text: str, line: int | None = None) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise EvalInputError(f"{path}{_at(line)}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        where = f":{line}" if line is not None else f":{exc.lineno}:{exc.colno}"
        raise EvalInputError(printable(f"{path}{where}: malformed JSON: {exc.msg}")) from None
    except ValueError as exc:
        raise EvalInputError(printable(f"{path}{_at(line)}: {exc}")) from None


def _no_constant(name: str):
    raise ValueError(f"non-finite number {name} in JSON")


def _at(line: int | None) -> str:
    return f":{line}" if line is not None else ""


def _number(path: Path, key: str, value: Any, allow_na: bool, unit: bool = True) -> float | None:
    """A finite number; every catalogued metric is a rate (accuracy, exact match, pass@k), so with `unit` it
    must lie in [0, 1] (its stderr too: a metric of 73.5 is a percentage some other tool wrote)."""
    if allow_na and value in ("N/A", None):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EvalInputError(printable(f"{path}: {key}: expected a finite number, got {value!r:.60}"))
    if unit and not 0 <= value <= 1:
        raise EvalInputError(printable(f"{path}: {key}: {value!r:.60} is outside [0, 1] (a rate; lm-eval writes "
                                       "0.735, never 73.5)"))
    return float(value)


def _load_results_file(path: Path) -> dict[str, TaskResult]:
    data = _json(path, _read(path))
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise EvalInputError(f"{path}: not an lm-eval results file (no `results` object)")
    out: dict[str, TaskResult] = {}
    for task, entry in data["results"].items():
        if task not in TASKS:
            raise EvalInputError(printable(f"{path}: results.{task}: unknown task id {task!r} "
                                           f"(known: {', '.join(TASKS)})"))
        if not isinstance(entry, dict):
            raise EvalInputError(f"{path}: results.{task}: expected an object")
        metrics = {}
        for key in TASKS[task].metrics:
            name, _, flt = key.partition(",")
            value = entry.get(key)
            se_key = f"{name}_stderr,{flt}"
            metrics[key] = Metric(
                None if value is None else _number(path, f"results.{task}.{key}", value, allow_na=False),
                _number(path, f"results.{task}.{se_key}", entry.get(se_key), allow_na=True),
            )
        out[task] = TaskResult(task, path, metrics, _n_samples(path, data, task), _settings(data, task))
        out[task].per_doc = _load_samples(path, task)
    return out


def _n_samples(path: Path, data: dict, task: str) -> int | None:
    n = ((data.get("n-samples") or {}).get(task) or {}).get("effective")
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise EvalInputError(f"{path}: n-samples.{task}.effective: expected a count, got {n!r:.40}")
    return n


def _settings(data: dict, task: str) -> dict[str, Any]:
    cfg = (data.get("configs") or {}).get(task) or {}
    gen = cfg.get("generation_kwargs") or {}
    return {"repeats": cfg.get("repeats"), "num_fewshot": cfg.get("num_fewshot"),
            **{k: gen.get(k) for k in ("max_gen_toks", "do_sample", "temperature")}}


def _load_samples(results_file: Path, task: str) -> dict[str, dict[int, float]] | None:
    """Per-document scores from `samples_<task>_<date>.jsonl` beside `results_<date>.json`, if logged."""
    date = results_file.stem.removeprefix("results_")
    path = results_file.with_name(f"samples_{task}_{date}.jsonl")
    if not path.exists():
        return None
    per_doc: dict[str, dict[int, float]] = {}
    for lineno, line in enumerate(_read(path).splitlines(), start=1):
        if not line.strip():
            continue
        row = _json(path, line, lineno)
        if not isinstance(row, dict) or not isinstance(row.get("doc_id"), int) or isinstance(row["doc_id"], bool):
            raise EvalInputError(f"{path}:{lineno}: not an lm-eval sample (no integer doc_id)")
        flt = row.get("filter", "none")
        for key in TASKS[task].metrics:
            name, _, want = key.partition(",")
            if flt == want and name in row:
                doc = per_doc.setdefault(key, {})
                if row["doc_id"] in doc:
                    raise EvalInputError(f"{path}:{lineno}: doc_id {row['doc_id']} appears twice for {key}")
                doc[row["doc_id"]] = _number(path, f"line {lineno}: {name}", row[name], allow_na=False)
    return per_doc
