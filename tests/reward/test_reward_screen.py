"""The pre-screen: pathological answers are recognised before math-verify, and no real answer ever is.

Prevents the measured throughput collapse (1 % degenerate responses halved throughput, each holding a worker for
the whole math-verify timeout) without changing a verdict: every reference answer of the supported math sets,
built here in each dataset's own layout, and every clean benchmark sample passes the screen; every screened
benchmark input scores 0.0 in math-verify without the screen too.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from reward_harness import SERVICE_DIR
from reward_service.screen import screen

REPO = SERVICE_DIR.parents[1]

# MATH (hendrycks / lighteval layout): the answer is the last \boxed{} of `solution`.
MATH_ANSWERS = [
    "\\frac{1}{2}", "2^{10}", "3^{2007}", "10^{10}", "2^{2^{2}}", "\\left( 3, \\frac{\\pi}{2} \\right)",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\$18.90", "x^2 + 7x + 10", "(-\\infty, 1] \\cup [3, \\infty)",
    "\\sqrt{2}", "\\text{(C)}", "\\dfrac{\\sqrt{3}}{2}", "8\\sqrt{2}", "\\{1, 2, 3\\}", "e^{i\\pi}", "90^\\circ",
    "\\frac{1}{\\frac{1}{2}+\\frac{1}{3}}", "\\infty", "-\\frac{7}{4}", "0.5", "5!", "2^{100} - 1", "\\binom{10}{3}",
    "y = -\\frac{3}{2}x + 5", "\\frac{a^{2}b^{3}}{c}", "1,\\!000,\\!000", "\\sin^2 x", "4^{3^{2}}",
]
GSM8K_ANSWERS = [72, 10, 5, 42, 624, 1080, 18, 3, 70000, 16]
DAPO_ANSWERS = ["34", "204", "1", "9", "112", "-3", "0", "8041"]
AIME_ANSWERS = [204, 113, 104, 25, 721, 0, 999, 33]


def math_rows() -> list[dict]:
    return [{"problem": f"Problem {i}.", "level": "Level 5", "type": "Algebra",
             "solution": f"We compute step by step, so the answer is $\\boxed{{{answer}}}$."}
            for i, answer in enumerate(MATH_ANSWERS)]


def gsm8k_rows() -> list[dict]:
    return [{"question": f"Question {n}?",
             "answer": f"She sold {n}/2 = <<{n}/2={n / 2:g}>>{n / 2:g} in May.\n"
                       f"So {n / 2:g}*2 = <<{n / 2:g}*2={n}>>{n}.\n#### {n}"} for n in GSM8K_ANSWERS]


def dapo_rows() -> list[dict]:
    return [{"data_source": "math_dapo", "prompt": [{"role": "user", "content": "Solve it."}], "ability": "MATH",
             "reward_model": {"ground_truth": answer, "style": "rule-lighteval/MATH_v2"},
             "extra_info": {"index": str(i)}} for i, answer in enumerate(DAPO_ANSWERS)]


def aime_rows() -> list[dict]:
    return [{"ID": f"2024-I-{i}", "Problem": "Find it.", "Solution": f"Thus the answer is $\\boxed{{{answer}}}$.",
             "Answer": answer} for i, answer in enumerate(AIME_ANSWERS)]


def _last_boxed(text: str) -> str:
    start = text.rindex("\\boxed{") + len("\\boxed{")
    depth, end = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    return text[start:end - 1]


def reference_pairs() -> list[tuple[str, str, str]]:
    """(dataset, gold as the service receives it, a response that states exactly that answer)."""
    pairs = []
    for row in math_rows():
        gold = _last_boxed(row["solution"])
        pairs += [("MATH", gold, row["solution"]), ("MATH", gold, f"\\boxed{{{gold}}}")]
    for row in gsm8k_rows():
        gold = row["answer"].split("####")[-1].strip()
        pairs += [("GSM8K", gold, row["answer"]), ("GSM8K", gold, f"The answer is \\boxed{{{gold}}}.")]
    for row in dapo_rows():
        gold = row["reward_model"]["ground_truth"]
        pairs.append(("DAPO-Math-17k", gold, f"Answer: \\boxed{{{gold}}}"))
    for row in aime_rows():
        gold = str(row["Answer"])
        pairs += [("AIME", gold, row["Solution"]), ("AIME", gold, f"\\boxed{{{gold}}}")]
    return pairs


def test_reference_layouts_are_built_as_the_datasets_ship_them():
    """The tables above really produce the answers they name (a wrong extraction would test nothing)."""
    assert [_last_boxed(row["solution"]) for row in math_rows()] == MATH_ANSWERS
    assert [row["answer"].split("####")[-1].strip() for row in gsm8k_rows()] == [str(n) for n in GSM8K_ANSWERS]
    assert len(reference_pairs()) == 2 * len(MATH_ANSWERS) + 2 * len(GSM8K_ANSWERS) + len(DAPO_ANSWERS) + \
        2 * len(AIME_ANSWERS)


@pytest.mark.parametrize("dataset, gold, response", reference_pairs(),
                         ids=[f"{p[0]}:{p[1][:24]}" for p in reference_pairs()])
def test_every_reference_answer_passes_the_screen(dataset, gold, response):
    assert screen((gold,), response) is None


def test_every_answer_passes_against_every_other_label():
    """A real answer scored against another problem's label is still left to math-verify (a wrong answer must
    be judged wrong by math-verify, not screened)."""
    golds = [gold for _, gold, _ in reference_pairs()]
    flagged = [(gold, answer) for gold in set(golds) for answer in set(golds)
               if screen((gold,), f"\\boxed{{{answer}}}") is not None]
    assert not flagged, flagged[:5]


def _bench():
    spec = importlib.util.spec_from_file_location("reward_bench", REPO / "bench" / "reward_service.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_mix_clean_samples_pass_and_pathological_ones_are_screened():
    bench = _bench()
    clean = bench.workload(3000, seed=2, pathological=False)
    assert not [s for s in clean if screen((s["label"],), s["response"]) is not None]
    screened = {p[:30]: screen(("1",), p) is not None for p in bench.PATHOLOGICAL}
    assert screened == {p[:30]: p is not bench.HUGE_RESPONSE for p in bench.PATHOLOGICAL}


def test_screened_inputs_score_zero_in_math_verify_alone():
    """Without the screen, math-verify gives each screened benchmark input reward 0.0 (after its timeout), so the
    screen changes the cost, not the reward. Run in a child process: the scorer caps its address space."""
    bench = _bench()
    inputs = [p for p in bench.PATHOLOGICAL if screen(("1",), p) is not None]
    script = f"""
import json, sys
sys.path.insert(0, {str(SERVICE_DIR)!r})
from reward_service import scoring
scoring.screen = lambda golds, response: None
scoring.init_worker(1, 4096)
print(json.dumps([scoring.score(("1",), r)["reward"] for r in json.loads(sys.stdin.read())]))
"""
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(inputs), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0.0] * len(inputs)
