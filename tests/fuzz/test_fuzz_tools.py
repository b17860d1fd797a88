"""Fuzz families beyond the values and manifest files: command-line arguments of grpo-lint / grpo-render, and the
inputs of grpo-data, grpo-models and grpo-eval. Every case exits 0, 1 or 2 with no traceback (never 3), and an
argument Helm or the API server would refuse is a usage error (exit 2). Cases: GRPO_FUZZ_TOOL_EXAMPLES (40)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from grpo_stack.cli.data import main as data_main
from grpo_stack.cli.eval import main as eval_main
from grpo_stack.cli.lint import main as lint_main
from grpo_stack.cli.models import main as models_main
from grpo_stack.cli.render import main as render_main
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import VALUES_FILES
from tests.fuzz.harness import check, in_process
from tests.fuzz.test_fuzz import SETTINGS

EXAMPLES = int(os.environ.get("GRPO_FUZZ_TOOL_EXAMPLES", "40"))
NAMES = ["grpo", "ok-name", "", "A B", "Bad_NS!", "a" * 63, "a" * 64, "-lead", "trail-", "x.y", "é", "a\nb",
         "${HOME}", "a" * 54, "1abc"]
SELECTS = ["GRPO002", "NOPE", "", ",", "grpo002", "pod-seccomp", "GRPO002,NOPE", "GRPO" + "9" * 50]
PATHS = ["", "a" * 5000, "/dev/zero", "/nonexistent.yaml", "/proc/self/fd", "/proc/self/task"]
# Values a JSON field of another tool's input may hold instead of the right one.
JSON_VALUES = [None, True, 0, -1, 1.5, 73.5, 1e308, "", "x", "main", [], [1], {}, {"a": 1}, "../../escape",
               [[[[[]]]]], "9" * 400]


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(release=st.sampled_from(NAMES), namespace=st.sampled_from(NAMES), select=st.sampled_from(SELECTS),
       path=st.sampled_from(PATHS + [str(VALUES_FILES[0])]), render=st.booleans())
def test_cli_argument_mutations(release, namespace, select, path, render):
    """--release/--namespace/--select/paths: a name Helm or the API server refuses is exit 2 (never a silent
    default), an unknown rule code is exit 2, an unusable path is exit 2."""
    from grpo_stack.apivalidation import names

    if render:
        outcome = in_process(render_main, [path, "--release", release, "--namespace", namespace, "--job"])
    else:
        outcome = in_process(lint_main, ["--no-cache", path, "--release", release, "--namespace", namespace,
                                         "--select", select])
    where = f"release={release!r} namespace={namespace!r} select={select!r} path={path[:40]!r}"
    check(outcome, where)
    if names.helm_release(release) or names.namespace(namespace):
        assert outcome.code == 2, where


@pytest.fixture(scope="module")
def tool_inputs(tmp_path_factory):
    """A prepared verl row, a staged model directory and an lm-eval run to mutate."""
    from tests.eval.lmeval_output import REAL_RUN
    from tests.models.modeldir import COMMIT, make_model

    root = tmp_path_factory.mktemp("tools")
    snapshot = make_model(root / "snapshot")
    staged = root / "staged"
    code = models_main(["stage", "Qwen/Qwen3-8B", "--revision", COMMIT, "--from-dir", str(snapshot), "--dest",
                        str(staged), "--no-progress"])
    assert code == 0
    return {"root": root, "staged": staged, "run": REAL_RUN}


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(field=st.sampled_from(["data_source", "prompt", "ability", "reward_model", "extra_info"]),
       value=st.sampled_from(JSON_VALUES))
def test_data_row_mutations(tool_inputs, field, value):
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = {"data_source": "openai/gsm8k", "prompt": [{"role": "user", "content": "1+1?"}], "ability": "math",
           "reward_model": {"style": "rule", "ground_truth": "2"}, "extra_info": {"split": "train", "index": 0}}
    row[field] = value
    path = tool_inputs["root"] / "rows.parquet"
    try:
        pq.write_table(pa.Table.from_pylist([row]), path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return  # parquet itself cannot hold this row
    out = tool_inputs["root"] / "out.parquet"
    outcome = in_process(data_main, ["prepare", "--from-file", str(path), "--output", str(out), "--no-progress"])
    check(outcome, f"grpo-data row {field}={value!r:.60}")
    if field in ("data_source", "prompt") and not (isinstance(value, str) and value):
        assert outcome.code == 2, outcome.text


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(field=st.sampled_from(["revision", "mutable", "commit", "files", "repo"]), value=st.sampled_from(JSON_VALUES))
def test_model_manifest_mutations(tool_inputs, field, value):
    staged = tool_inputs["root"] / "verify"
    if staged.exists():
        shutil.rmtree(staged)
    shutil.copytree(tool_inputs["staged"], staged)
    path = staged / "grpo-model-manifest.json"
    body = json.loads(path.read_text())
    body[field] = value
    path.write_text(json.dumps(body))
    outcome = in_process(models_main, ["verify", str(staged), "--no-progress"])
    check(outcome, f"grpo-models verify {field}={value!r:.60}")
    # An edited pin, a flag that is not a boolean or an edited file list never verifies clean.
    if field in ("revision", "files") or (field == "mutable" and not isinstance(value, bool)):
        assert outcome.code != 0, outcome.text


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(value=st.sampled_from(JSON_VALUES), stderr=st.booleans())
def test_eval_results_mutations(tool_inputs, value, stderr):
    from tests.eval.lmeval_output import REAL_BASELINE, edit_results

    run = tool_inputs["root"] / "run"
    if run.exists():
        shutil.rmtree(run)

    def edit(data):
        key = "exact_match_stderr,strict-match" if stderr else "exact_match,strict-match"
        data["results"]["gsm8k"][key] = value
        return data

    edit_results(tool_inputs["run"], run, edit)
    outcome = in_process(eval_main, ["compare", "--run", str(run), "--baseline", str(REAL_BASELINE)])
    check(outcome, f"grpo-eval compare {value!r:.60}")
    if isinstance(value, int | float) and not isinstance(value, bool) and not 0 <= value <= 1:
        assert outcome.code == 2, outcome.text
