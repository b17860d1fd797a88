"""Megatron-LM's 140 measured H100 peaks (tests/reference/gpu-memory/mlm_golden_h100.json, extracted from
NVIDIA/Megatron-LM@d98e8a64 tests/functional_tests/test_cases/**/golden_values_dev_dgx_h100.json) run through
the model as a regression report, not a gate: most rows lack the vocabulary, the KV heads and the world size.

Megatron's argument defaults fill what a row leaves out (megatron/training/arguments.py): ffn 4h, GELU without
gating, LayerNorm, untied embeddings, KV heads = heads, top-2 routing. The world is one 8-GPU node, as the tests'
names and their H100 runners suggest [inferred]; a row without a vocabulary is modelled without embedding and
logits (a lower bound, flagged). Each logs its last rank.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from grpo_stack.memory import GIB, Run, estimate
from grpo_stack.memory.arch import Arch

from tests.conftest import REPO_ROOT

SOURCE = REPO_ROOT / "tests" / "reference" / "gpu-memory" / "mlm_golden_h100.json"
H100 = 81920 * 2**20
WORLD = 8


@dataclass(frozen=True)
class GoldenRow:
    test: str
    predicted_gib: float | None
    measured_gib: float
    complete: bool  # the row states a vocabulary (the other defaults are Megatron's own)
    why: str = ""

    @property
    def error(self) -> float | None:
        return None if self.predicted_gib is None else self.predicted_gib / self.measured_gib - 1


def rows() -> list[dict]:
    return json.loads(SOURCE.read_text())


def run_for(row: dict) -> Run | None:
    h, heads, layers = row["h"], row["heads"], row["L"]
    if not (h and heads and layers and row["seq"] and row["mbs"]):
        return None
    tp, pp, cp, ep = (row[k] or 1 for k in ("tp", "pp", "cp", "ep"))
    if WORLD % (tp * pp * cp):
        return None
    experts = row["experts"] or 0
    ffn = row["ffn"] or 4 * h
    arch = Arch(layers, h, heads, heads, h // heads, 0 if experts else ffn, row["vocab"] or 0, experts=experts,
                moe_ffn=ffn if experts else 0, topk=2 if experts else 0, gated=False, norm_params=2)
    recompute = row["recompute"] or "none"
    return Run(arch, "megatron", "megatron", H100, 1, WORLD, tp=tp, pp=pp, cp=cp, ep=ep,
               etp=1 if experts else None, sequence_parallel=bool(row["sp"]),
               distributed_optimizer=bool(row["distopt"]), recompute=recompute, seq_len=row["seq"],
               micro_batch=row["mbs"], rl_logits=False,
               step_samples=max(1, (row["gbs"] or WORLD) // max(1, WORLD // (tp * pp * cp))))


def report() -> list[GoldenRow]:
    out = []
    for row in rows():
        run = run_for(row)
        if run is None:
            out.append(GoldenRow(row["test"], None, row["peak_GiB"], False, "layout does not fit 8 GPUs or shape "
                                 "missing"))
            continue
        peak = max(p.allocated for p in estimate(run).phases) / GIB
        out.append(GoldenRow(row["test"], round(peak, 2), row["peak_GiB"], bool(row["vocab"]),
                             "" if row["vocab"] else "no vocabulary: embedding and logits omitted"))
    return out


def table(found: list[GoldenRow]) -> str:
    lines = [f"{'test':<70} {'pred GiB':>9} {'meas GiB':>9} {'error':>7}  note"]
    for r in found:
        pred = f"{r.predicted_gib:9.2f}" if r.predicted_gib is not None else f"{'-':>9}"
        err = f"{100 * r.error:+6.1f}%" if r.error is not None else f"{'-':>7}"
        lines.append(f"{r.test[:70]:<70} {pred} {r.measured_gib:9.2f} {err}  {r.why}")
    modelled = [r for r in found if r.error is not None]
    within = sum(1 for r in modelled if abs(r.error) <= 0.25)
    lines.append(f"\n{len(modelled)} of {len(found)} modelled; {within} within 25 %")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(report()))
