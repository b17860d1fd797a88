"""Math scoring, run inside a pool worker process.

Runs on the worker's main thread, where math-verify's SIGALRM timeouts work (in a thread they raise ValueError,
which is how verl #3407 turned every reward into 0). math-verify swallows its own timeouts and returns "no match",
so a log handler tells a timeout apart from a wrong answer.
"""

from __future__ import annotations

import logging
import os
import resource
import time
from functools import lru_cache

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from reward_service.screen import screen

GOLD_EXTRACTION = (LatexExtractionConfig(),)
ANSWER_EXTRACTION = (ExprExtractionConfig(), LatexExtractionConfig())
MATH_VERIFY_LOGGERS = ("math_verify.parser", "math_verify.grader")

# Exit code of a worker that hit its memory limit; its heap is suspect, so it is replaced rather than reused.
EXIT_OUT_OF_MEMORY = 71
# The canary's input: a trivially correct answer that every healthy scorer marks ok.
CANARY = (("1",), "\\boxed{1}")

_parse_timeout_s = 1


class _MathVerifyTrouble(logging.Handler):
    """Notices the timeouts and memory errors math-verify logs instead of raising."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.timed_out = False
        self.out_of_memory = False

    def reset(self) -> None:
        self.timed_out = False
        self.out_of_memory = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and isinstance(record.exc_info[1], MemoryError):
            self.out_of_memory = True
        elif record.levelno >= logging.WARNING and str(record.msg).startswith("Timeout during"):
            self.timed_out = True


_trouble = _MathVerifyTrouble()


def init_worker(parse_timeout_s: int, memory_mb: int) -> None:
    """Pool initializer: cap the address space, hook math-verify's logs, and warm the parser."""
    global _parse_timeout_s
    _parse_timeout_s = parse_timeout_s
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for name in MATH_VERIFY_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [_trouble]
        logger.setLevel(logging.DEBUG)
        logger.propagate = False  # its messages embed the whole response; never print them
    score(*CANARY)


class _GoldTimeout(Exception):
    """Raised instead of returning, so lru_cache does not remember a timed-out label as unparseable."""


@lru_cache(maxsize=4096)
def _parse_gold(gold: str) -> tuple:
    # GRPO scores n responses per prompt against the same label, so parsed labels are cached.
    _trouble.reset()
    wrapped = gold if "\\boxed" in gold else f"\\boxed{{{gold}}}"
    parsed = parse(wrapped, extraction_config=GOLD_EXTRACTION, parsing_timeout=_parse_timeout_s)
    if _trouble.timed_out:
        raise _GoldTimeout
    return tuple(parsed)


def score(golds: tuple[str, ...], response: str, fault: str | None = None) -> dict:
    """Score one response; returns {"reward", "status"[, "detail"]}. Unexpected exceptions propagate on purpose."""
    try:
        return _score(golds, response, fault)
    except MemoryError:
        os._exit(EXIT_OUT_OF_MEMORY)


def _score(golds: tuple[str, ...], response: str, fault: str | None) -> dict:
    if fault:
        _inject(fault)
    if not golds:
        return _verdict("no_label", "the sample has no label")
    reason = screen(golds, response)
    if reason:
        return _verdict("screened", reason)
    try:
        gold = [item for text in golds for item in _parse_gold(text)]
    except _GoldTimeout:
        return _verdict("timeout", "parsing the label timed out")
    if not gold:
        return _verdict("no_label", "the label could not be parsed")

    _trouble.reset()
    answer = parse(response, extraction_config=ANSWER_EXTRACTION, parsing_timeout=_parse_timeout_s)
    _exit_if_out_of_memory()
    if not answer:
        if _trouble.timed_out:
            return _verdict("timeout", "parsing the response timed out")
        return _verdict("no_answer", "no answer found in the response")
    if verify(gold, answer, timeout_seconds=_parse_timeout_s):
        return {"reward": 1.0, "status": "ok"}
    _exit_if_out_of_memory()
    if _trouble.timed_out:
        return _verdict("timeout", "comparing the answer timed out")
    return {"reward": 0.0, "status": "wrong"}


def _verdict(status: str, detail: str) -> dict:
    return {"reward": 0.0, "status": status, "detail": detail}


def _exit_if_out_of_memory() -> None:
    if _trouble.out_of_memory:
        os._exit(EXIT_OUT_OF_MEMORY)


def _inject(fault: str) -> None:
    """Test-only faults; the service passes them only when REWARD_TEST_FAULT_INJECTION is on."""
    if fault == "raise":
        raise RuntimeError("injected scorer fault")
    if fault == "exit":
        os._exit(13)
    if fault == "hang":
        time.sleep(3600)
    if fault == "slow":
        time.sleep(1.0)  # a sample that takes a second and is then scored as usual
    if fault == "oom":
        bytearray(1 << 40)  # far past any RLIMIT_AS: proves the cap holds and maps to worker_died
