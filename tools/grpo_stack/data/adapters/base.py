"""What an adapter is: one Hugging Face dataset, its pinned revision, its parquet files and its row conversion."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..example import Example

COMMIT = re.compile(r"^[0-9a-f]{40}$")


class Skip(Exception):
    """A row the adapter cannot turn into a scoreable example (no answer, no test cases); counted, not fatal."""


@dataclass(frozen=True)
class Converted:
    """What one row's conversion decides; the adapter adds what it states once for every row."""

    problem: str  # the raw problem text: what the holdout audit hashes
    prompt: str  # the user message sent to the model
    ground_truth: str
    source_id: str  # the row's id in its source (index or upstream id)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Adapter:
    name: str  # registry key and the --dataset value
    repo: str  # Hugging Face dataset repository
    revision: str  # a 40-hex commit (a branch given with --revision needs --allow-mutable)
    data_source: str  # verl's default_compute_score / the reward routing key
    ability: str  # "math" | "code"
    splits: dict[str, str]  # split name -> data_files glob (*.parquet or *.jsonl) inside the repository
    convert: Callable[[dict[str, Any]], Converted]  # raises Skip for an unusable row
    columns: tuple[str, ...]  # columns the conversion reads: checked before any row is converted
    provenance: str  # where the repo id, revision, files and columns were read: URLs, confirmed or not

    @property
    def pinned(self) -> bool:
        return bool(COMMIT.match(self.revision))

    def example(self, row: dict[str, Any], split: str) -> Example:
        """One row as an Example: its data_source (the reward routing key GRPO550 checks), ability and source name
        come from this adapter, so the rows and the routing check cannot name different sources."""
        c = self.convert(row)
        return Example(data_source=self.data_source, ability=self.ability, problem=c.problem, prompt=c.prompt,
                       ground_truth=c.ground_truth, source=self.name, source_id=c.source_id, split=split,
                       metadata=c.metadata)


def boxed(text: str) -> str | None:
    """The content of the last \\boxed{...} (or \\fbox{...}) in `text`, braces matched; None when absent."""
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    i = text.find("{", start)
    if i < 0:
        return None
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return None


def test_cases(inputs: Any, outputs: Any, fn_name: str | None = None) -> str:
    """verl's sandbox ground truth: a JSON string {"inputs": [...], "outputs": [...][, "fn_name"]}."""
    if not isinstance(inputs, list) or not isinstance(outputs, list) or not inputs or len(inputs) != len(outputs):
        raise Skip("no usable test cases")
    cases: dict[str, Any] = {"inputs": inputs, "outputs": outputs}
    if fn_name:
        cases["fn_name"] = fn_name
    return json.dumps(cases, ensure_ascii=False)


MATH_BOXED = "{problem}\n\nLet's think step by step and output the final answer within \\boxed{{}}."
MATH_ANSWER_LINE = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n{problem}\n\n"
    'Remember to put your answer on its own line after "Answer:".'
)
CODE_STDIO = (
    "{problem}\n\nWrite a Python 3 program that reads the input from standard input and writes the answer to "
    "standard output. Put the whole program in one ```python code block."
)
CODE_FUNCTION = (
    "{problem}\n\nComplete this Python 3 code; the tests call `{fn_name}`:\n```python\n{starter}\n```\n"
    "Put the whole solution in one ```python code block."
)


def code_prompt(problem: str, fn_name: str | None, starter: str | None) -> str:
    if fn_name:
        return CODE_FUNCTION.format(problem=problem, fn_name=fn_name, starter=(starter or "").rstrip())
    return CODE_STDIO.format(problem=problem)


def apps_style_cases(raw: Any) -> tuple[str, str | None]:
    """APPS and TACO keep test cases as a JSON string {"inputs", "outputs"[, "fn_name"]}."""
    if not isinstance(raw, str) or not raw.strip():
        raise Skip("empty input_output")
    try:
        parsed = json.loads(raw)
    except ValueError:
        raise Skip("input_output is not JSON") from None
    if not isinstance(parsed, dict):
        raise Skip("input_output is not an object")
    fn_name = parsed.get("fn_name") or None
    return test_cases(parsed.get("inputs"), parsed.get("outputs"), fn_name), fn_name
