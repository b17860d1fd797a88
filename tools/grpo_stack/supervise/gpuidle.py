"""How long the run's GPUs have been idle, as Ray's own reporter sees them: the head's dashboard answers
`GET /nodes?view=summary` with every node's GPUs and their `utilizationGpu` in percent (Ray 2.53.0
dashboard/modules/reporter/reporter_models.py GpuUtilizationInfo, read by its agent on each node through NVML).
The supervisor on the head asks for it while an attempt runs; the stall detector's second signal
(global.job.supervision.stall.gpuIdleMinutes) is this clock.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

SUMMARY_PATH = "/nodes?view=summary"
TIMEOUT_SECONDS = 5.0


def utilisations(payload: dict[str, Any]) -> list[int] | None:
    """The utilisation of every GPU of every alive node in a `/nodes?view=summary` answer; None when no node
    reports a GPU utilisation (a CPU cluster, or no reporter yet): no verdict either way."""
    nodes = ((payload.get("data") or {}).get("summary")) or []
    found = []
    for node in nodes:
        if not isinstance(node, dict) or (node.get("raylet") or {}).get("state", "ALIVE") != "ALIVE":
            continue
        for gpu in node.get("gpus") or []:
            value = gpu.get("utilizationGpu") if isinstance(gpu, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                found.append(int(value))
    return found or None


def dashboard_reader(address: str, timeout: float = TIMEOUT_SECONDS) -> Callable[[], list[int] | None]:
    """Reads the GPUs' utilisation from the Ray dashboard at `address` (http://host:port); None when it cannot."""
    url = address.rstrip("/") + SUMMARY_PATH

    def read() -> list[int] | None:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - the head's own dashboard
                return utilisations(json.loads(response.read()))
        except (OSError, ValueError):
            return None

    return read


class IdleClock:
    """Seconds the GPUs have all been below `below_percent` without a break (0 while any is busy); None when the
    last reading had no GPU, so that no verdict rests on a missing reading."""

    def __init__(self, read: Callable[[], list[int] | None], below_percent: float,
                 clock: Callable[[], float] = time.monotonic):
        self.read, self.below, self.clock = read, below_percent, clock
        self.idle_since: float | None = None

    def __call__(self) -> float | None:
        values = self.read()
        now = self.clock()
        if values is None:
            self.idle_since = None
            return None
        if max(values) >= self.below:
            self.idle_since = None
            return 0.0
        if self.idle_since is None:
            self.idle_since = now
        return now - self.idle_since
