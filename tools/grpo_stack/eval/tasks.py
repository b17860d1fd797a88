"""The lm-eval tasks grpo-stack knows, by exact id, with the result keys each one must report.

One table: the values schema's `lm-eval.tasks` choices, the pass@k definitions shipped in the lm-eval chart
(`charts/grpo-stack/charts/lm-eval/tasks/<id>.yaml`, checked against this table by tests/eval) and
`grpo-eval compare` all read it. Ids are matched exactly: humaneval, humaneval_p4 and humaneval_p10 are different
benchmarks (one greedy sample, 4 and 10 sampled per problem) and never collapse onto one key; an id that is not
here is an error, so a future variant fails loudly instead of folding into its base task.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskDef:
    id: str
    metrics: tuple[str, ...]  # lm-eval result keys, "<metric>,<filter>"
    samples: int = 1  # generations per problem (lm-eval `repeats`)
    k: tuple[int, ...] = ()  # pass@k values reported (pass@k tasks only)
    shipped: bool = False  # definition ships in the lm-eval chart's tasks ConfigMap (else built into lm-eval)


def _pass_at(task: str, samples: int, flt: str, shipped: bool) -> TaskDef:
    k = (1, samples) if samples > 1 else (1,)
    return TaskDef(task, tuple(f"pass@{x},{flt}" for x in k), samples, k, shipped)


TASKS: dict[str, TaskDef] = {t.id: t for t in (
    TaskDef("gsm8k", ("exact_match,strict-match", "exact_match,flexible-extract")),
    _pass_at("humaneval", 1, "create_test", shipped=False),
    _pass_at("humaneval_p4", 4, "create_test", shipped=True),
    _pass_at("humaneval_p10", 10, "create_test", shipped=True),
    TaskDef("mbpp", ("pass_at_1,none",)),
    _pass_at("mbpp_p4", 4, "none", shipped=True),
    _pass_at("mbpp_p10", 10, "none", shipped=True),
)}

TASK_IDS: tuple[str, ...] = tuple(TASKS)
