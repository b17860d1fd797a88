"""Named custom scorers a route may point at. Each takes (golds, response text) and returns {"reward", "status"}.

They run on the event loop, so each must be cheap and bounded (the response is already capped in length).
Add one by writing a function here and registering it in CUSTOM_SCORERS; the routing table then accepts its name.
"""

from __future__ import annotations

import re

_SPACES = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


def exact_match(golds: tuple[str, ...], response: str) -> dict:
    """The whole response, whitespace-collapsed and case-folded, equals one of the reference answers."""
    if not golds:
        return {"reward": 0.0, "status": "no_label", "detail": "the sample has no label"}
    answer = _normalise(response)
    if not answer:
        return {"reward": 0.0, "status": "no_answer", "detail": "the response is empty"}
    if any(answer == _normalise(gold) for gold in golds):
        return {"reward": 1.0, "status": "ok"}
    return {"reward": 0.0, "status": "wrong"}


CUSTOM_SCORERS = {"exact_match": exact_match}
