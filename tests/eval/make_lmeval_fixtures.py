"""Writes the lm-eval result fixtures under tests/eval/fixtures/ with lm-eval's own writer.

Runs lm-evaluation-harness 0.4.10 (the version images/lm-eval pins) offline: local JSON datasets, task configs
that mirror the shipped ones (gsm8k's exact_match with its strict-match / flexible-extract filters; HumanEval's
pass@k metric returning {"pass@1": .., "pass@K": ..} under the `create_test` filter, with `repeats` samples per
problem), a scripted model that answers right on chosen documents, and the same save calls lm_eval's CLI makes
(`EvaluationTracker.save_results_aggregated` / `save_results_samples`). Nothing here runs in the test suite:

    python -m venv /tmp/lmeval && /tmp/lmeval/bin/pip install lm-eval==0.4.10
    /tmp/lmeval/bin/python tests/eval/make_lmeval_fixtures.py
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import transformers

# lm-eval's model registry names a class transformers 5 renamed; only its HF model module needs it.
if not hasattr(transformers, "AutoModelForVision2Seq"):
    transformers.AutoModelForVision2Seq = transformers.AutoModelForImageTextToText

from lm_eval.api.model import LM  # noqa: E402
from lm_eval.evaluator import simple_evaluate  # noqa: E402
from lm_eval.loggers import EvaluationTracker  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

OUT = Path(__file__).resolve().parent / "fixtures"
N_DOCS = 12


UTILS = """
import math


def pass_at_k(references, predictions, k=None):
    # The unbiased pass@k estimator (Chen et al. 2021), shaped like HF evaluate's code_eval result.
    out = {}
    for kk in k:
        vals = []
        for ref, preds in zip(references, predictions):
            n, c = len(preds), sum(p.strip() == ref.strip() for p in preds)
            vals.append(1.0 if n - c < kk else 1.0 - math.comb(n - c, kk) / math.comb(n, kk))
        out[f"pass@{kk}"] = sum(vals) / len(vals)
    return out


def keep(resps, docs):
    return resps
"""


class Scripted(LM):
    """Answers document i of task t right `right[t][i]` times out of its repeats, wrong otherwise."""

    def __init__(self, right):
        super().__init__()
        self.right, self.seen = right, {}

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for req in requests:
            prompt = req.args[0]
            task, doc = req.task_name, int(prompt.split("#")[1].split(":")[0])
            count = self.seen.get((task, doc), 0)
            self.seen[(task, doc)] = count + 1
            answer = f"A{doc}"
            good = count < self.right[task][doc]
            out.append(f" #### {doc}" if task == "gsm8k" and good else answer if good else " wrong")
        return out

    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


def gsm8k(data: Path) -> str:
    """lm-eval's gsm8k.yaml (exact_match, strict-match and flexible-extract filters) on local documents."""
    return f"""task: gsm8k
dataset_path: json
dataset_kwargs: {{data_files: {{test: {data}, train: {data}}}}}
output_type: generate_until
test_split: test
doc_to_text: "Question #{{{{id}}}}: {{{{question}}}}\\nAnswer:"
doc_to_target: "#### {{{{id}}}}"
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    regexes_to_ignore: [",", "\\\\$", "(?s).*#### ", "\\\\.$"]
generation_kwargs: {{until: ["Question:"], do_sample: false, temperature: 0.0}}
repeats: 1
num_fewshot: 0
filter_list:
  - name: strict-match
    filter:
      - {{function: regex, regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"}}
      - {{function: take_first}}
  - name: flexible-extract
    filter:
      - {{function: regex, group_select: -1, regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"}}
      - {{function: take_first}}
metadata: {{version: 3.0}}
"""


def humaneval(name: str, data: Path, repeats: int, k: list[int]) -> str:
    """The shape of the chart's humaneval_pK tasks: pass@k under the create_test filter, `repeats` samples."""
    sampling = "do_sample: true, temperature: 0.2" if repeats > 1 else "do_sample: false"
    return f"""task: {name}
dataset_path: json
dataset_kwargs: {{data_files: {{test: {data}, train: {data}}}}}
output_type: generate_until
test_split: test
unsafe_code: true
doc_to_text: "Problem #{{{{id}}}}: {{{{question}}}}"
doc_to_target: "A{{{{id}}}}"
metric_list:
  - metric: !function utils.pass_at_k
    aggregation: mean
    higher_is_better: true
    k: {k}
generation_kwargs: {{until: ["\\nclass"], {sampling}}}
repeats: {repeats}
num_fewshot: 0
filter_list:
  - name: create_test
    filter:
      - {{function: custom, filter_fn: !function utils.keep}}
metadata: {{version: 1.0}}
"""


def run(name: str, tasks: list[str], right: dict, tmp: Path) -> None:
    tracker = EvaluationTracker(output_path=str(tmp / name))
    # Only these definitions, like the chart's --include_path: lm-eval's own humaneval would fetch code_eval.
    manager = TaskManager(include_path=str(tmp / "tasks"), include_defaults=False)
    results = simple_evaluate(model=Scripted(right), tasks=tasks, log_samples=True, evaluation_tracker=tracker,
                              task_manager=manager,
                              confirm_run_unsafe_code=True, gen_kwargs="max_gen_toks=4096")
    samples = results.pop("samples")
    tracker.general_config_tracker.model_name_sanitized = "grpo-eval"
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    dest = OUT / name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(tmp / name, dest)
    # Stable names: the writer stamps the wall-clock time into every file name.
    for f in dest.rglob("*"):
        if f.is_file() and tracker.date_id in f.name:
            f.rename(f.with_name(f.name.replace(tracker.date_id, "2026-12-01T00-00-00.000000")))


def main() -> int:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        data = tmp / "docs.jsonl"
        data.write_text("".join(json.dumps({"id": i, "question": f"q{i}"}) + "\n" for i in range(N_DOCS)))
        (tmp / "tasks").mkdir()
        (tmp / "tasks" / "utils.py").write_text(UTILS)
        (tmp / "tasks" / "gsm8k.yaml").write_text(gsm8k(data))
        for name, repeats, k in (("humaneval", 1, [1]), ("humaneval_p4", 4, [1, 4]), ("humaneval_p10", 10, [1, 10])):
            (tmp / "tasks" / f"{name}.yaml").write_text(humaneval(name, data, repeats, k))
        tasks = ["gsm8k", "humaneval", "humaneval_p4", "humaneval_p10"]
        # Baseline: 6/12 gsm8k; HumanEval variants with fewer right samples. Run: better on each.
        base = {"gsm8k": [1] * 6 + [0] * 6, "humaneval": [1] * 4 + [0] * 8,
                "humaneval_p4": [2] * 4 + [1] * 2 + [0] * 6, "humaneval_p10": [5] * 4 + [1] * 4 + [0] * 4}
        better = {"gsm8k": [1] * 9 + [0] * 3, "humaneval": [1] * 6 + [0] * 6,
                  "humaneval_p4": [3] * 4 + [2] * 4 + [0] * 4, "humaneval_p10": [7] * 6 + [2] * 4 + [0] * 2}
        run("baseline", tasks, base, tmp)
        run("run", tasks, better, tmp)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
