"""`grpo-eval compare`: a run against a baseline (and optionally a curve over training steps), from lm-eval output.

Every metric is shown with its stderr; every delta with its σ, p-value and the test used (paired from
per-document scores when both runs logged them on the same documents, else unpaired from the stderrs). A task or
metric one side lacks is reported as missing and makes the exit status 1; it is never shown as 0.0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import stats
from .results import EvalInputError, Metric, MissingData, RunResults, TaskResult, load_run
from .tasks import TASKS

COMPARED_SETTINGS = ("repeats", "num_fewshot", "max_gen_toks", "do_sample", "temperature")


@dataclass
class Row:
    task: str
    metric: str
    baseline: Metric | None
    run: Metric | None
    delta: stats.Delta | None = None
    note: str = ""


@dataclass
class CurvePoint:
    step: int
    metric: Metric | None  # None: that step is not evaluated yet


@dataclass
class Comparison:
    run: str
    baseline: str
    rows: list[Row]
    curve: dict[tuple[str, str], list[CurvePoint]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def compare(run_path: Path, baseline_path: Path, tasks: list[str] | None = None,
            curve: list[tuple[int, Path]] | None = None) -> Comparison:
    for t in tasks or []:
        if t not in TASKS:
            raise EvalInputError(f"--tasks: unknown task id {t!r} (known: {', '.join(TASKS)})")
    run, base = load_run(run_path, "run"), load_run(baseline_path, "baseline")
    wanted = tasks or sorted(set(run.tasks) | set(base.tasks), key=list(TASKS).index)
    out = Comparison(str(run_path), str(baseline_path), [])
    for task in wanted:
        r, b = run.tasks.get(task), base.tasks.get(task)
        if r and b:
            _check_comparable(task, r, b)
        for key in TASKS[task].metrics:
            row = Row(task, key, b.metrics[key] if b else None, r.metrics[key] if r else None)
            _fill_delta(row, r, b, out.missing)
            out.rows.append(row)
    if curve:
        out.curve = _curve(wanted, curve, out.missing)
    return out


def _check_comparable(task: str, r: TaskResult, b: TaskResult) -> None:
    """Scores generated under different budgets or sample counts are different measurements."""
    for key in COMPARED_SETTINGS:
        if r.settings.get(key) != b.settings.get(key):
            raise EvalInputError(f"{task}: run ({r.file}) and baseline ({b.file}) differ in {key} "
                                 f"({r.settings.get(key)!r} vs {b.settings.get(key)!r}); the scores are not "
                                 "comparable")
    if r.n is not None and b.n is not None and r.n != b.n:
        raise EvalInputError(f"{task}: run evaluated {r.n} documents, baseline {b.n}; the scores are not comparable")


def _fill_delta(row: Row, r: TaskResult | None, b: TaskResult | None, missing: list[str]) -> None:
    for side, res, m in (("run", r, row.run), ("baseline", b, row.baseline)):
        if res is None:
            missing.append(f"{row.task}: not in the {side} results")
            row.note = f"task missing from {side}"
            return
        if m is None or m.value is None:
            missing.append(f"{row.task} {row.metric}: missing from the {side} results ({res.file})")
            row.note = f"metric missing from {side}"
            return
    docs_r = (r.per_doc or {}).get(row.metric) if r.per_doc is not None else None
    docs_b = (b.per_doc or {}).get(row.metric) if b.per_doc is not None else None
    if docs_r and docs_b and set(docs_r) == set(docs_b):
        ids = sorted(docs_r)
        row.delta = stats.paired([docs_r[i] for i in ids], [docs_b[i] for i in ids])
        row.note = f"paired over {len(ids)} documents"
        return
    why = ("the runs logged different documents" if docs_r and docs_b else
           "no per-sample results in " + " and ".join(s for s, d in (("run", docs_r), ("baseline", docs_b)) if not d))
    for side, m in (("run", row.run), ("baseline", row.baseline)):
        if m.stderr is None:
            missing.append(f"{row.task} {row.metric}: no stderr in the {side} results and {why}")
            row.note = f"unpaired impossible: no stderr in {side} ({why})"
            return
    row.delta = stats.unpaired(row.run.value, row.run.stderr, row.baseline.value, row.baseline.stderr)
    row.note = f"unpaired from stderrs ({why})"


def _curve(tasks: list[str], steps: list[tuple[int, Path]], missing: list[str]) -> dict:
    series: dict[tuple[str, str], list[CurvePoint]] = {(t, k): [] for t in tasks for k in TASKS[t].metrics}
    for step, path in steps:
        try:
            run: RunResults | None = load_run(path, f"step {step}")
        except MissingData:
            run = None  # not evaluated yet: a dash, not a failure
        for (task, key), points in series.items():
            if run is None:
                points.append(CurvePoint(step, None))
                continue
            res = run.tasks.get(task)
            m = res.metrics[key] if res else None
            if m is None or m.value is None:
                missing.append(f"step {step} ({path}): {task} {key} missing")
            points.append(CurvePoint(step, m if m and m.value is not None else Metric(None, None)))
    return series


# --- rendering ------------------------------------------------------------------------------------------------

DASH = "—"


def _fmt(m: Metric | None, missing: str = "missing") -> str:
    if m is None or m.value is None:
        return missing
    se = f"{m.stderr:.4f}" if m.stderr is not None else "stderr missing"
    return f"{m.value:.4f} ± {se}"


def markdown(c: Comparison) -> str:
    lines = [f"run: `{c.run}`  \nbaseline: `{c.baseline}`", "",
             "| task | metric | baseline | run | Δ | σ | p | test |", "|---|---|---|---|---|---|---|---|"]
    for r in c.rows:
        d = r.delta
        cells = [f"{d.delta:+.4f}", f"{d.z:.2f}", f"{d.p:.3g}"] if d else ["missing"] * 3
        lines.append(f"| {r.task} | {r.metric} | {_fmt(r.baseline)} | {_fmt(r.run)} | {' | '.join(cells)} | "
                     f"{r.note} |")
    if c.curve:
        steps = [p.step for p in next(iter(c.curve.values()))]
        lines += ["", "| task | metric | " + " | ".join(f"step {s}" for s in steps) + " |",
                  "|---|---|" + "---|" * len(steps)]
        for (task, key), points in c.curve.items():
            cells = [DASH if p.metric is None else _fmt(p.metric) for p in points]
            lines.append(f"| {task} | {key} | " + " | ".join(cells) + " |")
    if c.missing:
        lines += ["", "Missing:"] + [f"- {m}" for m in c.missing]
    return "\n".join(lines) + "\n"


def as_json(c: Comparison) -> dict[str, Any]:
    def metric(m: Metric | None):
        return None if m is None or m.value is None else {"value": m.value, "stderr": m.stderr}

    return {
        "run": c.run, "baseline": c.baseline,
        "rows": [{"task": r.task, "metric": r.metric, "baseline": metric(r.baseline), "run": metric(r.run),
                  "delta": asdict(r.delta) if r.delta else None, "note": r.note} for r in c.rows],
        "curve": [{"task": t, "metric": k,
                   "points": [{"step": p.step, "evaluated": p.metric is not None,
                               "value": p.metric.value if p.metric else None,
                               "stderr": p.metric.stderr if p.metric else None} for p in pts]}
                  for (t, k), pts in c.curve.items()],
        "missing": c.missing,
    }


def plot(c: Comparison, out: Path) -> None:
    """One panel per metric: the curve with ±1 stderr bars, the baseline and the run as horizontal bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(c.curve)
    fig, axes = plt.subplots(len(keys), 1, figsize=(7, 2.8 * len(keys)), squeeze=False)
    for ax, key in zip(axes[:, 0], keys, strict=True):
        pts = c.curve[key]
        # NaN breaks the line: a step that is not evaluated (or lacks the metric) shows as a gap, not a slope.
        values = [p.metric.value if p.metric and p.metric.value is not None else math.nan for p in pts]
        errors = [p.metric.stderr or 0.0 if p.metric and p.metric.value is not None else 0.0 for p in pts]
        ax.errorbar([p.step for p in pts], values, yerr=errors, marker="o", capsize=3, label="checkpoint ±1 stderr")
        row = next(r for r in c.rows if (r.task, r.metric) == key)
        for m, name, style in ((row.baseline, "baseline", "--"), (row.run, "run", ":")):
            if m is not None and m.value is not None:
                line = ax.axhline(m.value, linestyle=style, label=name, color="grey" if name == "baseline" else "C1")
                if m.stderr:
                    ax.axhspan(m.value - m.stderr, m.value + m.stderr, alpha=0.15, color=line.get_color())
        ax.set_title(f"{key[0]} — {key[1]}")
        ax.set_xlabel("training step")
        ax.set_ylabel("score")
        ax.set_xticks([p.step for p in pts],
                      [str(p.step) if p.metric is not None else f"{p.step}\n(not evaluated)" for p in pts])
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
