"""One run's training steps as a picture: each step's time split by GRPO phase (verl's own `timing_s/<phase>`),
its mean reward, and the reward service's status mix over the run (its `reward_scores_total` counters), as one
SVG file written with the standard library.

    python3 -m grpo_stack.stepmetrics.plot STEPS_JSONL [--reward-metrics METRICS_TEXT] -o OUT.svg

STEPS_JSONL: the step file verl's `file` tracker wrote, as the run's storage keeps it
(`<checkpointDir>/grpo-stack/logs/<job id>/steps.jsonl`, docs/observability.md); METRICS_TEXT: the reward service's
/metrics text at the end of the run."""

from __future__ import annotations

import argparse
import re
import sys
from html import escape
from pathlib import Path

from .verl_steps import StepRecord, parse

# verl's phase names in pipeline order (verl/trainer/ppo/ray_trainer.py marked_timer blocks); others follow.
PHASES = ("gen", "reward", "old_log_prob", "ref", "values", "adv", "update_critic", "update_actor", "update_weights",
          "save_checkpoint", "testing")
COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac", "#86bcb6", "#d37295")
STATUS = re.compile(r'^reward_scores_total\{[^}]*status="([^"]+)"[^}]*\}\s+([0-9.eE+-]+)$', re.MULTILINE)
ROW_H, LEFT, BAR_W = 22, 70, 560


def reward_statuses(metrics_text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for status, value in STATUS.findall(metrics_text):
        out[status] = out.get(status, 0.0) + float(value)
    return out


def _phases(records: list[StepRecord]) -> list[str]:
    seen = {p for r in records for p in r.phases}
    return [p for p in PHASES if p in seen] + sorted(seen - set(PHASES))


def svg(records: list[StepRecord], statuses: dict[str, float] | None = None, title: str = "") -> str:
    if not records:
        raise ValueError("no training step in the step file")
    phases = _phases(records)
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(phases)}
    longest = max(max(r.seconds or 0.0, sum(r.phases.values())) for r in records) or 1.0
    scale = BAR_W / longest
    parts: list[str] = []
    y = 40
    parts.append(f'<text x="10" y="20" font-weight="bold">{escape(title or "Training steps by phase")}</text>')
    for r in records:
        x = float(LEFT)
        parts.append(f'<text x="10" y="{y + 15}">step {r.step}</text>')
        for p in phases:
            seconds = r.phases.get(p, 0.0)
            if seconds <= 0:
                continue
            w = seconds * scale
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW_H - 4}" fill="{colour[p]}">'
                         f'<title>step {r.step} {escape(p)}: {seconds:.2f} s</title></rect>')
            x += w
        total = f"{r.seconds:.1f} s" if r.seconds is not None else "?"
        reward = f", reward {r.reward_mean:.3f}" if r.reward_mean is not None else ""
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 15}">{total}{reward}</text>')
        y += ROW_H
    y += 10
    for i, p in enumerate(phases):  # legend
        lx, ly = LEFT + (i % 4) * 150, y + (i // 4) * 18
        parts.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{colour[p]}"/>'
                     f'<text x="{lx + 16}" y="{ly + 11}">{escape(p)}</text>')
    y += ((len(phases) + 3) // 4) * 18 + 20
    if statuses:
        total = sum(statuses.values()) or 1.0
        parts.append(f'<text x="10" y="{y + 12}" font-weight="bold">Reward service, scored samples by status '
                     f'({int(total)} in all)</text>')
        y += 22
        for status, count in sorted(statuses.items(), key=lambda kv: -kv[1]):
            w = BAR_W * count / total
            parts.append(f'<text x="10" y="{y + 13}">{escape(status)}</text>'
                         f'<rect x="{LEFT + 40}" y="{y}" width="{w:.1f}" height="14" fill="#4e79a7"/>'
                         f'<text x="{LEFT + 46 + w:.1f}" y="{y + 12}">{int(count)}</text>')
            y += 18
    width = LEFT + BAR_W + 200
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 10}" font-family="sans-serif" '
            f'font-size="12"><rect width="100%" height="100%" fill="white"/>' + "".join(parts) + "</svg>\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m grpo_stack.stepmetrics.plot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("steps", type=Path)
    p.add_argument("--reward-metrics", type=Path)
    p.add_argument("--title", default="")
    p.add_argument("-o", "--output", type=Path, required=True)
    opts = p.parse_args(argv)
    try:
        records = [r for r in map(parse, opts.steps.read_text().splitlines()) if r is not None]
        statuses = reward_statuses(opts.reward_metrics.read_text()) if opts.reward_metrics else None
        opts.output.write_text(svg(records, statuses, opts.title))
    except (OSError, ValueError) as exc:
        print(f"plot: {exc}", file=sys.stderr)
        return 2
    print(f"plot: {len(records)} steps -> {opts.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
