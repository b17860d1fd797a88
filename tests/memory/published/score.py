"""Score the memory model on published rows: GRPO920's verdict (error, warning, none) against the published outcome,
and the point estimate against a measured peak, the same quantity the source measured (measured_quantity).
`python -m tests.memory.published.score [fitting|aside] [BATCH]` prints the table; a batch's aside set is scored
once, when the work on the model is done (split.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from grpo_stack.lint.rules.gpu_memory import SEVERITY, findings_for_run
from grpo_stack.memory import estimate
from grpo_stack.memory.calibrate import predicted_gib
from grpo_stack.memory.resolve import FIX_KEYS

from .adapt import NotExpressed, architectures, run_of
from .split import BATCHES, aside, fitting

GIB = 2**30


@dataclass(frozen=True)
class Scored:
    id: str
    outcome: str  # fits | oom | measured | (a peak row's source kind)
    verdict: str | None  # error | warning | none; None: not expressed
    peak_gib: float | None  # the point estimate's peak phase
    measured_gib: float | None
    reason: str = ""  # why the row is not expressed

    @property
    def false_error(self) -> bool:
        return self.outcome == "fits" and self.verdict == "error"

    @property
    def missed_oom(self) -> bool:
        return self.outcome == "oom" and self.verdict == "none"

    @property
    def error_pct(self) -> float | None:
        if self.peak_gib is None or not self.measured_gib:
            return None
        return 100 * (self.peak_gib / self.measured_gib - 1)


def verdict(run) -> str:
    """GRPO920's out-of-memory verdict: its findings but the KV preemption warning, which says the run fits."""
    keys = FIX_KEYS["miles-argv" if run.framework == "miles" else "verl-hydra-" + run.engine]
    severities = {(h.severity or SEVERITY).value
                  for h in findings_for_run(run, "", keys, lambda kind: {"key_path": kind})
                  if "it preempts sequences" not in h.message}
    return "error" if "error" in severities else "warning" if "warning" in severities else "none"


def measured_quantity(report, row: dict) -> float:
    """The model's figure for what the row's source measured, GiB: the torch allocator's peak of the process that
    logged it. verl and miles as `grpo-render --memory --from-log` compares them (calibrate.predicted_gib: verl's
    actor process, trainer phases only; miles' device-wide samples); Megatron-LM's golden values, one rank's
    max_memory_allocated of pre-training (allocator terms, no CUDA context). A verl version that kept vLLM's GPU
    workers in the trainer's process (rollout_in_trainer_process: before verl PR #4280) logs that process's peak
    over the rollout phase too: the allocator peak over every phase."""
    if row.get("rollout_in_trainer_process"):
        return max(p.allocated for p in report.phases) / GIB
    if row.get("framework") in ("verl", "miles", "slime"):
        return predicted_gib(report, "verl" if row["framework"] == "verl" else "miles")
    return max(p.allocated for p in report.phases) / GIB


def score(selected: list[dict], stated_means: bool = True) -> list[Scored]:
    """Each row scored; with `stated_means`, at the mean lengths its source states (else at every sample's cap)."""
    known = architectures()
    out = []
    for row in selected:
        outcome = row.get("outcome") or row.get("source_kind") or "?"
        measured = row.get("measured_peak_gib")
        try:
            run = run_of(row, known, stated_means)
        except NotExpressed as exc:
            out.append(Scored(row["id"], outcome, None, None, measured, str(exc)))
            continue
        report = estimate(run)
        peak = measured_quantity(report, row) if measured else report.peak.total / GIB
        out.append(Scored(row["id"], outcome, verdict(run), peak, measured))
    return out


def table(scored: list[Scored]) -> str:
    lines = ["| row | published | GRPO920 | predicted peak | measured | error |", "|---|---|---|---|---|---|"]
    for s in scored:
        if s.verdict is None:
            lines.append(f"| {s.id} | {s.outcome} | not expressed: {s.reason} | | | |")
            continue
        err = f"{s.error_pct:+.0f} %" if s.error_pct is not None else ""
        measured = f"{s.measured_gib:.1f} GiB" if s.measured_gib else ""
        lines.append(f"| {s.id} | {s.outcome} | {s.verdict} | {s.peak_gib:.1f} GiB | {measured} | {err} |")
    lines.append("")
    lines.append(summary(scored))
    return "\n".join(lines)


def summary(scored: list[Scored]) -> str:
    expressed = [s for s in scored if s.verdict is not None]
    fits = [s for s in expressed if s.outcome == "fits"]
    ooms = [s for s in expressed if s.outcome == "oom"]
    peaks = [s.error_pct for s in expressed if s.error_pct is not None]
    return (f"expressed {len(expressed)} of {len(scored)}; published working: {len(fits)}, false errors "
            f"{sum(s.false_error for s in fits)}, warnings {sum(s.verdict == 'warning' for s in fits)}; "
            f"published out of memory: {len(ooms)}, caught (error or warning) "
            f"{sum(not s.missed_oom for s in ooms)}; measured peaks: {len(peaks)}, within 15 % "
            f"{sum(abs(p) <= 15 for p in peaks)}, within 25 % {sum(abs(p) <= 25 for p in peaks)}")


def main(argv: list[str]) -> int:
    """score [fitting|aside] [BATCH]: every batch's rows of that part, or one batch's (its file name)."""
    which = argv[0] if argv else "fitting"
    batch = argv[1] if len(argv) > 1 else None
    if batch is not None and batch not in {b.file for b in BATCHES}:
        print(f"no batch {batch!r}; batches: {', '.join(b.file for b in BATCHES)}", file=sys.stderr)
        return 2
    selected = fitting(batch) if which == "fitting" else aside(batch)
    print(table(score(selected)))
    if any(r.get("mean_prompt_length") or r.get("mean_response_length") for r in selected):
        print(f"\nat every sample's cap (no stated mean length read): {summary(score(selected, False))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
