"""What an evaluation release serves and how lm-eval asks for it, kept by construction rather than by a lint rule
(the promise table in docs/rules.md names these tests as the proof)."""

from __future__ import annotations

import pytest
import yaml
from grpo_stack.lint.engine import lint_values
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import VALUES_FILES, with_overrides
from tests.eval.test_eval_phase import NAMES, NS, OVERLAY, one


def _rendered(name: str, step: int | None):
    files = [load_values_file(p) for p in VALUES_FILES if p.stem == name] + [load_values_file(OVERLAY)]
    user = with_overrides(merge_user_values(files), {"global.eval.checkpointStep": step})
    return user, render(user, release="grpo-eval", namespace=NS)


def _vllm(r) -> dict:
    return one(r, "Deployment", "vllm")["spec"]["template"]["spec"]


@pytest.mark.parametrize("name", NAMES)
def test_served_model_is_derived_never_typed(name, tmp_path):
    """The predecessor's eval server read a typed `vllm.modelPath` that pointed at a `merged` directory of another
    run's layout. Here no values key names the served model: one that tries is refused, and the server mounts the
    evaluated step under the run's own checkpointDir (or the run's base model)."""
    user, r = _rendered(name, 100)
    job = user["global"]["job"]
    for c in _vllm(r)["containers"] + _vllm(r).get("initContainers", []):
        mounts = [m for m in c["volumeMounts"] if m["name"] == "storage"]
        assert [m["subPath"] for m in mounts] == [f"{job['trainer']['checkpointDir']}/global_step_100/merged"]
    _, base = _rendered(name, None)
    assert [m["subPath"] for m in _vllm(base)["containers"][0]["volumeMounts"] if m["name"] == "storage"] == \
        [job["model"]["path"]]

    typed = tmp_path / "typed.yaml"
    typed.write_text(yaml.safe_dump({"vllm": {"modelPath": "checkpoints/other-run/global_step_100/merged"}}))
    result = lint_values([str(p) for p in VALUES_FILES if p.stem == name] + [str(OVERLAY), str(typed)],
                         release="grpo-eval", namespace=NS)
    assert any("vllm.modelPath" in str(e) for e in result.input_errors), [str(e) for e in result.input_errors]


@pytest.mark.parametrize("name", NAMES)
def test_vllm_serves_only_merged_weights(name):
    """A LoRA run evaluated as its bare base model would score the base model under the run's name. The server
    loads one directory (the merged model, the adapter folded in by grpo-eval merge) and takes no adapter."""
    _, r = _rendered(name, 100)
    args = _vllm(r)["containers"][0]["args"]
    assert args[0] == "/model"  # the model, positionally, after the image's `vllm serve`
    assert not [a for a in args if a.split("=")[0] in ("--enable-lora", "--lora-modules", "--max-lora-rank")], args


@pytest.mark.parametrize("name", NAMES)
def test_lm_eval_asks_for_the_served_model_in_text(name):
    """lm-eval must request the model name vLLM serves (another name is a 404 on every request) and must not
    tokenize with a tokenizer of its own: it sends text, and vLLM tokenizes with the served directory's
    tokenizer (no --tokenizer argument points elsewhere)."""
    _, r = _rendered(name, 100)
    args = _vllm(r)["containers"][0]["args"]
    served = [a.split("=", 1)[1] for a in args if a.startswith("--served-model-name=")]
    assert not [a for a in args if a.startswith("--tokenizer")], args
    c = one(r, "Job", "lm-eval")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert served and env["SERVED_MODEL"] == served[0]
    script = c["args"][0]
    assert "model=${SERVED_MODEL}" in script
    assert "tokenized_requests=False" in script and "tokenizer_backend=None" in script
