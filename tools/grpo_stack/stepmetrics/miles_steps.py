"""miles' step metrics as its own Prometheus backend serves them, read into the step records the exporter serves.

With `--use-prometheus` (miles/utils/tracking_utils/prometheus_utils.py) miles starts a Ray actor on the driver's
node that serves, on `--prometheus-port`, one gauge per number it logs: `miles_metric_` + the logged key with `/`
and `-` as `_` (`rollout/step` -> `miles_metric_rollout_step`), labelled `run_name`. Only miles' own keys are read:
`rollout/step` (the rollout id, logged with the rollout's data and again with its timings), its timers as
`perf/<timer>_time` (miles/utils/train_metric_utils.py log_perf_data_raw: train_wait, the wait for the rollout;
train; actor_train; log_probs; ref_log_probs; data_preprocess; ...), `perf/step_time` (train_wait + train),
`perf/actor_train_tok_per_s`, `rollout/raw_reward` and `rollout/response_lengths` (per-sample means of the rollout,
miles/backends/training_utils/log_utils.py log_rollout_data). A gauge holds the last value logged, not the step it
belongs to: a new rollout counts as a step when `rollout/step` moves, and its timings are those logged last.
The collector sets a logged dict's gauges one by one while its HTTP thread may be writing the page, so one page can
mix two rollouts' numbers: a moved step is taken only once a second read gives the same record.
"""

from __future__ import annotations

import math
import re
import urllib.request
from collections.abc import Callable

from .verl_steps import StepRecord

PREFIX = "miles_metric_"
STEP = PREFIX + "rollout_step"
PERF, TIME = PREFIX + "perf_", "_time"
FETCH_TIMEOUT_S = 2.0
MAX_BYTES = 4 * 2**20  # the collector's page: a few hundred gauges
# name{labels} value  (the text exposition format; timestamps are not written by prometheus_client's gauges)
SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def gauges(text: str) -> dict[str, float]:
    """The finite miles_metric_* samples of a /metrics page, by name (one run per collector: labels dropped)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        found = SAMPLE.match(line)
        if not found:
            continue
        try:
            value = float(found.group(3))
        except ValueError:
            continue
        if math.isfinite(value):
            out[found.group(1)] = value
    return out


def record(values: dict[str, float]) -> StepRecord | None:
    """The step the gauges describe; None before miles logged a rollout."""
    if STEP not in values:
        return None
    phases = {name[len(PERF):-len(TIME)]: v for name, v in values.items()
              if name.startswith(PERF) and name.endswith(TIME) and name != PERF + "step" + TIME}
    return StepRecord(step=int(values[STEP]), seconds=values.get(PERF + "step" + TIME), phases=phases,
                      reward_mean=values.get(PREFIX + "rollout_raw_reward"),
                      response_length_mean=values.get(PREFIX + "rollout_response_lengths"),
                      tokens_per_second=values.get(PERF + "actor_train_tok_per_s"))


def fetch(url: str) -> str | None:
    """The collector's page, or None while it does not answer (not started yet, or gone with the driver)."""
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310 (an http URL we built)
            return response.read(MAX_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


class CollectorSteps:
    """Follows miles' collector: `new()` returns a record each time `rollout/step` moves. `url()` gives the
    collector's /metrics URL once the driver runs (None before)."""

    def __init__(self, url: Callable[[], str | None], read: Callable[[str], str | None] = fetch):
        self.url, self.read = url, read
        self.last: int | None = None

    def new(self) -> list[StepRecord]:
        where = self.url()
        found = self._read(where) if where else None
        if found is None or (self.last is not None and found.step <= self.last):
            return []
        if self._read(where) != found:  # read while the collector was setting the gauges: try at the next poll
            return []
        self.last = found.step
        return [found]

    def _read(self, where: str) -> StepRecord | None:
        text = self.read(where)
        return record(gauges(text)) if text else None
