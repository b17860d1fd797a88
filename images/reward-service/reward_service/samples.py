"""Turning what trainers really send into the strings the scorer needs.

slime and miles send `label` as the raw dataset value (int, float, str, list, dict) and `prompt` as a string or a
chat message list; a 422 for any of those fails a whole rollout batch, so every JSON value is accepted here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from reward_service.limits import NotAFloat, too_deep

# Keys that hold the answer when a dataset stores its label as an object (verl's reward_model dict and friends).
LABEL_KEYS = ("ground_truth", "answer", "label", "solution", "target")


@dataclass(frozen=True)
class Sample:
    golds: tuple[str, ...]      # acceptable reference answers; empty means the sample has no label
    response: str               # the tail of the response, at most max_response_chars long
    truncated: bool             # the response was longer than the cap and only its tail is scored
    fault: str | None = None    # test-only fault to inject in the worker
    problem: tuple[str, str] | None = None  # (status, detail) when the input breaks a limit; never scored


def build_sample(response: Any, label: Any, metadata: Any, max_chars: int, allow_faults: bool,
                 max_depth: int = 32, max_label_chars: int | None = None) -> Sample:
    for name, value in (("response", response), ("label", label), ("metadata", metadata)):
        where = too_deep(value, max_depth)
        if where is not None:
            return Sample((), "", False, problem=("bad_input", f"{name} nests deeper than {max_depth} levels "
                                                                f"(at {name}{where.removeprefix('the sample')})"))
    golds = gold_answers(label) if max_label_chars is not None else ()
    unusable = next((gold for gold in golds if isinstance(gold, NotAFloat)), None)
    if unusable is not None:
        return Sample((), "", False, problem=("bad_label", f"the label {unusable[:40]} is not a number a float can "
                                                           "hold (NaN, infinite or out of range)"))
    longest = max(map(len, golds), default=0)
    if max_label_chars is not None and longest > max_label_chars:
        return Sample((), "", False, problem=("bad_label", f"a reference answer is {longest} characters long; "
                                                           f"the limit is {max_label_chars}"))
    text = response_text(response)
    truncated = len(text) > max_chars
    if truncated:
        # Final answers sit at the end of a completion, so the tail is what matters.
        text = text[-max_chars:]
    fault = metadata.get("inject_fault") if allow_faults and isinstance(metadata, dict) else None
    return Sample(
        golds=golds,
        response=text,
        truncated=truncated,
        fault=fault if isinstance(fault, str) else None,
    )


def response_text(response: Any) -> str:
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, list) and response and isinstance(response[-1], dict):
        # A chat transcript: the answer is in the last message.
        return response_text(response[-1].get("content"))
    if isinstance(response, dict) and "content" in response:
        return response_text(response["content"])
    return _scalar_text(response)


def gold_answers(label: Any) -> tuple[str, ...]:
    """A list label means "any of these answers is correct"; a dict label carries its answer under a known key."""
    if isinstance(label, dict):
        for key in LABEL_KEYS:
            if key in label:
                return gold_answers(label[key])
        return ()
    if isinstance(label, (list, tuple)):
        return tuple(gold for item in label for gold in gold_answers(item))
    if label is None:
        return ()
    if isinstance(label, NotAFloat):
        return (label,)  # build_sample refuses it
    text = _scalar_text(label).strip()
    return (text,) if text else ()


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 42.0 from a parquet column means 42
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, sort_keys=True, default=str)


def sample_hash(prompt: Any, response: Any, label: Any) -> str:
    """Identifies a sample in logs without logging its text; computed only when something is logged."""
    try:
        blob = json.dumps([prompt, response, label], sort_keys=True, default=str, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        blob = repr(type(prompt)) + repr(type(response)) + repr(type(label))  # too deep: a coarse but safe hash
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]
