"""Loaded by the lm-eval process of tests/wires/test_lmeval_wire.py (PYTHONPATH): the Hub lookups, served locally.

`datasets.load_dataset` answers from the rows in $GRPO_WIRE_DATASETS (upstream column names, a few rows per split)
and refuses any dataset not listed there; `evaluate.load("code_eval")` answers a scorer that counts nothing
(scoring comes after the wire). Everything else, the task files and the request building, is lm-eval's own.
"""

import json
import os

import datasets
import evaluate

_real_load = datasets.load_dataset


def _load_dataset(path=None, name=None, *args, **kwargs):
    with open(os.environ["GRPO_WIRE_DATASETS"]) as f:
        rows = json.load(f)
    key = f"{path}:{name}" if name else path
    if key not in rows:
        raise RuntimeError(f"tests/wires: no local rows for dataset {key!r}; add them to the test's DATASETS")
    return datasets.DatasetDict({split: datasets.Dataset.from_list(r) for split, r in rows[key].items()})


class _NoScore:
    def compute(self, references, predictions, k=(1,), **_kwargs):
        return {f"pass@{n}": 0.0 for n in ([k] if isinstance(k, int) else k)}, {}


def _load_metric(name, *args, **kwargs):
    if name != "code_eval":
        raise RuntimeError(f"tests/wires: metric {name!r} would come from the Hub")
    return _NoScore()


datasets.load_dataset = _load_dataset
evaluate.load = _load_metric
