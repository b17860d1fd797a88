"""Builds lm-eval output directories for tests from the real ones lm-eval 0.4.10 wrote (fixtures/, see
make_lmeval_fixtures.py): same file names, same keys, the numbers a test chooses."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATE = "2026-12-01T00-00-00.000000"
REAL_RUN = FIXTURES / "run"
REAL_BASELINE = FIXTURES / "baseline"


def real_results() -> dict:
    return json.loads((REAL_RUN / "grpo-eval" / f"results_{DATE}.json").read_text())


def real_sample(task: str) -> dict:
    return json.loads((REAL_RUN / "grpo-eval" / f"samples_{task}_{DATE}.jsonl").read_text().splitlines()[0])


def stderr_like_lm_eval(scores: list[float]) -> float:
    """lm-eval's mean_stderr: sample standard deviation (n - 1) over sqrt(n)."""
    n = len(scores)
    mu = sum(scores) / n
    return math.sqrt(sum((x - mu) ** 2 for x in scores) / (n - 1)) / math.sqrt(n)


def write_gsm8k_run(out: Path, scores: list[float], log_samples: bool = True, max_gen_toks: int = 4096) -> Path:
    """A gsm8k-only lm-eval output dir whose per-document exact_match scores are `scores` (both filters)."""
    data = real_results()
    mean = sum(scores) / len(scores)
    se = stderr_like_lm_eval(scores)
    data["results"] = {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": mean,
                                 "exact_match_stderr,strict-match": se, "exact_match,flexible-extract": mean,
                                 "exact_match_stderr,flexible-extract": se}}
    data["n-samples"] = {"gsm8k": {"original": len(scores), "effective": len(scores)}}
    data["configs"] = {"gsm8k": data["configs"]["gsm8k"]}
    data["configs"]["gsm8k"]["generation_kwargs"]["max_gen_toks"] = max_gen_toks
    d = out / "grpo-eval"
    d.mkdir(parents=True)
    (d / f"results_{DATE}.json").write_text(json.dumps(data))
    if log_samples:
        template = real_sample("gsm8k")
        lines = []
        for flt in ("strict-match", "flexible-extract"):
            for i, s in enumerate(scores):
                row = copy.deepcopy(template)
                row.update({"doc_id": i, "filter": flt, "exact_match": s})
                lines.append(json.dumps(row))
        (d / f"samples_gsm8k_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    return out


def edit_results(src: Path, out: Path, edit) -> Path:
    """A copy of the lm-eval output dir `src` with its results JSON passed through `edit(data)`."""
    import shutil

    shutil.copytree(src, out)
    f = out / "grpo-eval" / f"results_{DATE}.json"
    data = json.loads(f.read_text())
    edited = edit(data)
    f.write_text(edited if isinstance(edited, str) else json.dumps(data))
    return out
