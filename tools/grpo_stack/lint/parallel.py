"""Values files linted in worker processes: each file's lint is independent of the others (its own merge,
render, object schemas and rules), and a cold run over several files spends most of its time in Helm's engine and
jsonschema, both bound to one core per process.

Workers are forked after the parent has imported the linter and built what every file needs (schemas,
validators, chart defaults), so they start with all of it. Helm's engine (Go, with its own threads) is loaded
by each worker itself: a process that has loaded it cannot be forked safely, so a parent that already has it
(a test session that rendered before) lints in-process instead. Results come back as the cache's JSON entries
(lint/cache.py), the one serialised form of a result.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable

from .engine import LintResult

MAX_JOBS = 8


def default_jobs(units: int) -> int:
    """Worker processes for `units` values files: one per available core, at most one per file; 1 (in-process)
    where forking is unsafe or pointless."""
    if units < 2 or not sys.platform.startswith("linux") or "helm_python" in sys.modules:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, units, MAX_JOBS))


def process_map(jobs: int | None) -> Callable[[Callable, list], Iterable[LintResult]]:
    """A `map_values` for lint/release.lint_units: in-process for one job, else a fork pool of `jobs` (None:
    `default_jobs`)."""

    def run(lint: Callable, items: list) -> Iterable[LintResult]:
        n = default_jobs(len(items)) if jobs is None else min(jobs, len(items))
        if n < 2 or "helm_python" in sys.modules:
            return map(lint, items)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from .cache import _result
        from .engine import prewarm

        prewarm()
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork")) as pool:
            entries = list(pool.map(_lint_entry, [lint] * len(items), items))
        return [_result(e) for e in entries]

    return run


def _lint_entry(lint: Callable, files: list[str]) -> dict:
    from .cache import _entry

    return _entry(lint(files))
