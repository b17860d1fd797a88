"""Code scoring: extract the program from the response, run it on the test cases in the sandbox, count passes.

Follows verl's SandboxFusion scorer where that is right (code extraction, one /run_code per stdin/stdout case, the
first `max_tests` cases, reward = share of cases passed) and departs from it where it hid faults: an
infrastructure error raises SandboxFault (a 5xx from this service) instead of scoring the case -1 and the sample 0.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from reward_service.sandbox import SandboxClient

_FENCE_PYTHON = re.compile(r"```python[ \t]*\n(.*?)```", re.DOTALL)
_FENCE_ANY = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
TEST_KEYS = ("ground_truth", "tests", "test_cases", "label")


def extract_code(response: str) -> str | None:
    """The last ```python block, else the first fenced block; None when there is none."""
    blocks = _FENCE_PYTHON.findall(response)
    if blocks:
        return blocks[-1]
    block = _FENCE_ANY.search(response)
    return block.group(1) if block else None


class BadTests(ValueError):
    """The label does not hold usable test cases (a dataset problem: HTTP 200 with status bad_label)."""


def test_cases(label: Any, max_tests: int) -> list[tuple[str, str]]:
    """(stdin, expected stdout) pairs from a label: {"inputs": [...], "outputs": [...]}, its JSON text, or either
    under a `ground_truth`-style key (verl's reward_model layout)."""
    for _ in range(4):  # unwrap JSON text and wrapper objects, a bounded number of times
        if isinstance(label, str):
            try:
                label = json.loads(label)
            except ValueError:
                raise BadTests("the label is not JSON test cases") from None
        elif isinstance(label, dict) and "inputs" not in label:
            key = next((k for k in TEST_KEYS if k in label), None)
            if key is None:
                break
            label = label[key]
        else:
            break
    if not isinstance(label, dict) or "inputs" not in label or "outputs" not in label:
        raise BadTests('the label has no {"inputs": [...], "outputs": [...]} test cases')
    if label.get("fn_name"):
        raise BadTests("call-based test cases (fn_name) are not supported; only stdin/stdout cases")
    inputs, outputs = label["inputs"], label["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs) or not inputs:
        raise BadTests("inputs and outputs must be non-empty lists of the same length")
    cases = []
    for stdin, expected in list(zip(inputs, outputs, strict=True))[:max_tests]:
        cases.append((_text(stdin), _text(expected)))
    return cases


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(item) for item in value)
    return json.dumps(value)


def _same_output(actual: str, expected: str) -> bool:
    # Trailing spaces and blank lines are not part of an answer; judges compare line by line.
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.rstrip().splitlines()]
    return lines(actual) == lines(expected)


def case_passed(reply: dict, expected: str) -> bool:
    if reply.get("status") != "Success":
        return False  # compile error, runtime error, non-zero exit, time limit: the program's fault
    run = reply.get("run_result") or {}
    return run.get("status") == "Finished" and _same_output(str(run.get("stdout") or ""), expected)


async def score_code(sandbox: SandboxClient, response: str, label: Any, max_tests: int) -> dict:
    try:
        cases = test_cases(label, max_tests)
    except BadTests as problem:
        return {"reward": 0.0, "status": "bad_label", "detail": str(problem)}
    code = extract_code(response)
    if code is None:
        return {"reward": 0.0, "status": "no_answer", "detail": "no fenced code block in the response"}
    # SandboxFault propagates: one unrunnable case makes the whole sample's reward unknown.
    replies = await asyncio.gather(*(sandbox.run(code, stdin) for stdin, _ in cases), return_exceptions=True)
    for reply in replies:
        if isinstance(reply, BaseException):
            raise reply
    passed = sum(case_passed(reply, expected) for reply, (_, expected) in zip(replies, cases, strict=True))
    reward = passed / len(cases)
    return {"reward": reward, "status": "ok" if passed == len(cases) else "wrong",
            "detail": f"{passed} of {len(cases)} test cases passed"}
