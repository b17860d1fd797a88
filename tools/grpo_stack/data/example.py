"""One prepared example and the two layouts it is written in.

verl (RLHFDataset / default_compute_score): data_source, prompt (chat list), ability, reward_model.{style,
ground_truth}, extra_info. miles (`--input-key prompt --metadata-key metadata` and `--label-key` by reward
dispatch, see MILES_LABEL_KEYS): prompt, label, service_label, metadata. Both carry the same facts, so a run reads
the same problems whichever framework it uses.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

# The layout grpo-data writes for each output suffix. Both frameworks read both formats (verl's RLHFDataset
# parquet and JSON lines, miles' read_file .jsonl and .parquet), so the suffix alone decides whose rows a file holds:
# the other framework reads none of its labels (verl reward_model.ground_truth, miles --label-key).
LAYOUT_BY_SUFFIX = {".parquet": "verl", ".jsonl": "miles"}


def layout_for(name: str) -> str | None:
    """The framework whose layout grpo-data writes to a file of this name, or None for a suffix it never writes."""
    return LAYOUT_BY_SUFFIX.get(PurePosixPath(name).suffix)


def possessive(framework: str) -> str:
    return f"{framework}'" if framework.endswith("s") else f"{framework}'s"


def suffix_for(framework: str) -> str:
    return next(suffix for suffix, fw in LAYOUT_BY_SUFFIX.items() if fw == framework)


@dataclass(frozen=True)
class Example:
    data_source: str  # the reward routing key verl and the reward service dispatch on
    ability: str  # "math" or "code"
    problem: str  # the raw problem text: what the holdout audit hashes
    prompt: str  # the user message sent to the model
    ground_truth: str  # math: the answer; code: JSON {"inputs", "outputs"[, "fn_name"]} test cases
    source: str  # registry name of the adapter that produced it (gsm8k, apps, ...)
    source_id: str  # the row's id in its source (index or upstream id)
    split: str
    pass_rate: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: two copies of a problem that differ only in layout match."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def problem_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def verl_row(ex: Example, index: int) -> dict[str, Any]:
    return {
        "data_source": ex.data_source,
        "prompt": [{"role": "user", "content": ex.prompt}],
        "ability": ex.ability,
        "reward_model": {"style": "rule", "ground_truth": ex.ground_truth},
        "extra_info": {
            **_provenance(ex, index),
            "metadata": json.dumps(ex.metadata, sort_keys=True, ensure_ascii=False),
        },
    }


def _provenance(ex: Example, index: int) -> dict[str, Any]:
    """Where a row came from, in the same keys and order in both layouts."""
    return {"split": ex.split, "index": index, "source": ex.source, "source_id": ex.source_id,
            "problem": ex.problem, "pass_rate": ex.pass_rate}


# miles hands a scorer only the sample's label: its remote_rm posts {prompt, response, label} and nothing else
# (radixark/miles miles/rollout/rm_hub/__init__.py). So the miles layout carries the ground truth twice, under the
# key each dispatch reads: miles' own rule-based scorers (--rm-type deepscaler/math) want the bare answer string,
# the reward service wants the data_source it routes on next to it. The builder picks the key (job/miles.py).
MILES_LABEL_KEYS = {"builtin": "label", "service": "service_label"}
MILES_INPUT_KEY = "prompt"
MILES_METADATA_KEY = "metadata"


def miles_row(ex: Example, index: int) -> dict[str, Any]:
    return {
        MILES_INPUT_KEY: [{"role": "user", "content": ex.prompt}],
        MILES_LABEL_KEYS["builtin"]: ex.ground_truth,
        MILES_LABEL_KEYS["service"]: {"data_source": ex.data_source, "ground_truth": ex.ground_truth},
        MILES_METADATA_KEY: {
            "data_source": ex.data_source,
            "ability": ex.ability,
            **_provenance(ex, index),
            **({"extra": ex.metadata} if ex.metadata else {}),
        },
    }


def from_verl_row(row: dict[str, Any], origin: str) -> Example:
    """A row of a prepared verl parquet file (ours or another tool's) back to an Example."""
    # The reward service refuses a sample whose data_source is not a name or whose prompt is not text: refused
    # here, at the row, rather than as every sample of the run.
    missing = [k for k in ("prompt", "data_source", "reward_model") if k not in row]
    if missing:
        raise ValueError(f"not a verl-layout row (KeyError: {missing[0]!r})")
    if not isinstance(row.get("data_source"), str) or not row["data_source"]:
        raise ValueError(f"data_source must be a non-empty string, got {_shown(row.get('data_source'))}")
    prompt = row.get("prompt")
    if not ((isinstance(prompt, str) and prompt.strip()) or (isinstance(prompt, list) and prompt and all(
            isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)
            for m in prompt))):
        raise ValueError(f"prompt must be a non-empty string or a list of {{role, content}} messages, got "
                         f"{_shown(prompt)}")
    try:
        text = "\n".join(m["content"] for m in prompt if m.get("role") == "user") if isinstance(prompt, list) \
            else prompt
        extra = row.get("extra_info") or {}
        meta = extra.get("metadata")
        return Example(
            data_source=str(row["data_source"]),
            ability=str(row.get("ability") or ""),
            problem=str(extra.get("problem") or text),
            prompt=text,
            ground_truth=str(row["reward_model"]["ground_truth"]),
            source=str(extra.get("source") or origin),
            source_id=str(extra.get("source_id") if extra.get("source_id") is not None else extra.get("index", "")),
            split=str(extra.get("split") or ""),
            pass_rate=_float_or_none(extra.get("pass_rate")),
            metadata=json.loads(meta) if isinstance(meta, str) and meta else {},
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a verl-layout row ({type(exc).__name__}: {exc})") from None


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)
