"""The breakdown as text (one block per phase, one line per term, GiB) or JSON."""

from __future__ import annotations

import json

from .model import GIB, Report


def as_dict(report: Report) -> dict:
    run = report.run
    return {
        "gpu_gib": round(run.gpu_bytes / GIB, 2),
        "placement": "colocated" if run.colocated else "disaggregated",
        "peak": {"phase": report.peak.name, "gib": round(report.peak.total / GIB, 2),
                 "fraction": round(report.fraction(report.peak), 4)},
        "oom": report.oom,
        "states_gib": {k: round(v / GIB, 3) for k, v in report.states.items()},
        "phases": [{"phase": p.name, "pool": p.pool, "gib": round(p.total / GIB, 2),
                    "fraction": round(report.fraction(p), 4), "leaves_resident": list(p.leaves),
                    "terms": [{"term": x.name, "gib": round(x.bytes / GIB, 3), "source": x.source,
                               "margin": x.margin} for x in p.terms]} for p in report.phases],
        "kv_cache": None if report.kv_tokens is None else {
            "tokens_per_engine": int(report.kv_tokens), "one_max_model_len": report.kv_need_one,
            "concurrency_x_length": report.kv_need_all},
        "engine_refusal": report.engine_refusal or None,
        "host_ram_per_node_gib": round(report.host_bytes / GIB, 1),
        "node_ram_gib": round(run.node_ram_bytes / GIB, 1) if run.node_ram_bytes else None,
    }


def as_json(report: Report) -> str:
    return json.dumps(as_dict(report), indent=2)


def as_text(report: Report) -> str:
    run = report.run
    gpu = run.gpu_bytes / GIB
    lines = [f"per-GPU memory ({'colocated' if run.colocated else 'disaggregated'}, GPU {gpu:.1f} GiB); "
             f"peak: {report.peak.name} {report.peak.total / GIB:.1f} GiB "
             f"({100 * report.fraction(report.peak):.0f} %){'  OUT OF MEMORY' if report.oom else ''}"]
    for p in report.phases:
        lines.append(f"\n{p.name} [{p.pool}]  {p.total / GIB:8.1f} GiB  {100 * report.fraction(p):5.1f} %")
        for x in p.terms:
            lines.append(f"  {x.name:<44} {x.bytes / GIB:8.2f}  {x.source}")
        if p.leaves:
            lines.append(f"  leaves resident: {', '.join(p.leaves)}")
    if report.kv_tokens is not None:
        lines.append(f"\nKV cache: {report.kv_tokens:,.0f} tokens per engine; one max_model_len "
                     f"{report.kv_need_one:,}; concurrency x length {report.kv_need_all:,}")
    if report.engine_refusal:
        lines.append(report.engine_refusal)
    if report.host_bytes:
        node = f" of {run.node_ram_bytes / GIB:.0f} GiB" if run.node_ram_bytes else ""
        lines.append(f"host RAM per node for offloaded states: {report.host_bytes / GIB:.0f} GiB{node}")
    return "\n".join(lines)
