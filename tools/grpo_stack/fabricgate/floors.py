"""The bus bandwidth an all-reduce must reach: half of what a published run on the same instance type reached
(grpo_stack.catalog.busbw), compared at that run's message size or above. Half, because a healthy cluster differs
from a published one by NCCL, plugin and driver versions, topology and node count (the published multi-node runs
are of 2 to 16 nodes), while the failures the gate is for (a socket fallback, a dead EFA device or NVLink, a
throttled GPU) cost far more than half; a value in the values file replaces it."""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import busbw

FRACTION = 0.5


@dataclass(frozen=True)
class Floor:
    min_gbps: float
    min_size: int  # only rows of this message size or larger are compared
    why: str


def floor_for(instance: str, multi_node: bool, override_gbps: float | None = None) -> Floor | None:
    if override_gbps is not None:
        return Floor(override_gbps, 0, "global.job.fabricGate.minBusBandwidthGBps")
    row = busbw.published(instance, multi_node)
    if row is None:
        return None
    return Floor(row.gbps * FRACTION, row.size_bytes,
                 f"half of {row.gbps} GB/s at {row.size_bytes >> 20} MiB, {row.nodes} node(s): {row.source}")
