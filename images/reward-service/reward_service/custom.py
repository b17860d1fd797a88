"""Named custom scorers a route may point at. Each takes (golds, response text) and returns {"reward", "status"}.

They run on the event loop, so each must be cheap and bounded (the response is already capped in length).
Add one by writing a function here and registering it in CUSTOM_SCORERS; the routing table then accepts its name.
"""

from __future__ import annotations

import re
from collections import Counter

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


CHRF_ORDER = 6   # character n-grams of 1..6, sacreBLEU's chrF default
CHRF_BETA = 2    # recall weighted twice as much as precision, as in chrF


def chrf(golds: tuple[str, ...], response: str) -> dict:
    """Partial credit: the character n-gram F-score (chrF, Popovic 2015) of the response against the closest
    reference answer, whitespace removed and case-folded. 1.0 for an answer equal to a reference (up to spaces and
    case), between 0 and 1 for a near miss (a misspelt name, a truncated string); a graded reward for short
    free-text answers where exact_match gives every sample of a group the same 0."""
    if not golds:
        return {"reward": 0.0, "status": "no_label", "detail": "the sample has no label"}
    hypothesis = "".join(_normalise(response).split())
    if not hypothesis:
        return {"reward": 0.0, "status": "no_answer", "detail": "the response is empty"}
    best = max(_chrf(hypothesis, "".join(_normalise(gold).split())) for gold in golds)
    return {"reward": best, "status": "ok" if best == 1.0 else "wrong"}


def _chrf(hypothesis: str, reference: str) -> float:
    if hypothesis == reference:
        return 1.0
    precision = recall = 0.0
    for n in range(1, CHRF_ORDER + 1):
        hyp = Counter(hypothesis[i:i + n] for i in range(len(hypothesis) - n + 1))
        ref = Counter(reference[i:i + n] for i in range(len(reference) - n + 1))
        if hyp and ref:
            matched = sum((hyp & ref).values())
            precision += matched / sum(hyp.values())
            recall += matched / sum(ref.values())
    precision, recall = precision / CHRF_ORDER, recall / CHRF_ORDER
    if precision + recall == 0:
        return 0.0
    beta2 = CHRF_BETA * CHRF_BETA
    return round((1 + beta2) * precision * recall / (beta2 * precision + recall), 6)


CUSTOM_SCORERS = {"exact_match": exact_match, "chrf": chrf}
