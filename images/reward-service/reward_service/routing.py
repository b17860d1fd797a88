"""Routing: which scorer judges a sample, decided by its `data_source` through an exact-match table.

The table comes from the chart values (`reward-service.routes`, rendered into REWARD_ROUTES as JSON). There is no
default route and no prefix or suffix matching: a source the table does not name is refused, because scoring it
with a guessed scorer trains on a wrong reward (`numina_cn_k12_h2` is not `numina_olympiads`).
"""

from __future__ import annotations

import json
from typing import Any

from reward_service.custom import CUSTOM_SCORERS

# Scorers every image has; custom ones are the functions registered in reward_service.custom.
BUILTIN_SCORERS = ("math", "code")
MAX_SOURCE_CHARS = 256


class RoutingError(ValueError):
    """The routing table itself is malformed (a start-up error)."""


class UnknownSource(Exception):
    """The sample's data_source is missing, ambiguous or not in the table (HTTP 400, never a default)."""


def scorer_names() -> tuple[str, ...]:
    return BUILTIN_SCORERS + tuple(sorted(CUSTOM_SCORERS))


def parse_routes(text: str) -> tuple[tuple[str, str], ...]:
    """REWARD_ROUTES: a JSON object {data_source: scorer}; refuses empty tables and unknown scorers."""
    if not text.strip():
        raise RoutingError("REWARD_ROUTES is not set: map every data_source the data carries to a scorer "
                           f"({', '.join(scorer_names())}); there is no default")
    try:
        table = json.loads(text)
    except ValueError as error:
        raise RoutingError(f"REWARD_ROUTES is not valid JSON: {error}") from None
    if not isinstance(table, dict) or not table:
        raise RoutingError("REWARD_ROUTES must be a non-empty JSON object {data_source: scorer}")
    for source, scorer in table.items():
        if not source or len(source) > MAX_SOURCE_CHARS or source != source.strip():
            raise RoutingError(f"REWARD_ROUTES: data_source {source[:80]!r} must be 1-{MAX_SOURCE_CHARS} characters "
                               "without surrounding spaces")
        if scorer not in scorer_names():
            raise RoutingError(f"REWARD_ROUTES: {source!r} -> {scorer!r}: unknown scorer; "
                               f"allowed: {', '.join(scorer_names())}")
    return tuple(sorted(table.items()))


def check(routes: tuple[tuple[str, str], ...], sandbox_url: str | None) -> None:
    code_sources = [source for source, scorer in routes if scorer == "code"]
    if code_sources and not sandbox_url:
        raise RoutingError(f"REWARD_ROUTES sends {', '.join(code_sources[:5])} to the code scorer but "
                           "REWARD_SANDBOX_URL is not set (enable the sandbox-fusion component)")


def data_source(top_level: Any, metadata: Any, label: Any) -> str:
    """The sample's data_source: top-level field, metadata.data_source (verl client) or label.data_source
    (miles and slime send only prompt/response/label, so their prepared label carries it)."""
    found = []
    for value in (top_level, metadata.get("data_source") if isinstance(metadata, dict) else None,
                  label.get("data_source") if isinstance(label, dict) else None):
        if value is not None:
            if not isinstance(value, str):
                raise UnknownSource(f"data_source must be a string, got {type(value).__name__}")
            found.append(value)
    if not found:
        raise UnknownSource("the sample names no data_source (top-level, metadata.data_source or label.data_source)")
    if len(set(found)) > 1:
        raise UnknownSource(f"the sample names conflicting data_sources: {', '.join(repr(v[:80]) for v in found)}")
    return found[0]


class Router:
    def __init__(self, routes: tuple[tuple[str, str], ...]):
        self._table = dict(routes)

    def scorer(self, source: str) -> str:
        scorer = self._table.get(source)
        if scorer is None:
            known = sorted(self._table)
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise UnknownSource(f"data_source {source[:MAX_SOURCE_CHARS]!r} is not in the routing table "
                                f"(reward-service.routes: {listed})")
        return scorer
