"""NOTES names the Hugging Face token Secret the pods need, with the release's own name and key, so an install
whose Secret is missing (pods in CreateContainerConfigError) says what to create. Rendered by the chart itself
(Helm's engine, as grpo-render) for every shipped values file, the evaluation overlay and a renamed Secret."""

from __future__ import annotations

import copy

import pytest
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import REPO_ROOT, VALUES_FILES

EVAL = REPO_ROOT / "values" / "eval" / "eval.yaml"


@pytest.mark.parametrize("values", VALUES_FILES, ids=lambda p: p.stem)
def test_notes_name_the_hf_token_secret(values):
    notes = render(load_values_file(values).data, release="grpo", namespace="team-a").notes
    assert "HF_TOKEN from Secret hf-token (key HF_TOKEN) in namespace team-a" in notes
    assert "kubectl -n team-a create secret generic hf-token --from-literal=HF_TOKEN=" in notes


def test_evaluation_release_and_a_renamed_secret():
    data = merge_user_values([load_values_file(VALUES_FILES[0]), load_values_file(EVAL)])
    data = copy.deepcopy(data)
    data["global"].setdefault("secrets", {})["hfToken"] = {"name": "hub-credentials", "key": "TOKEN"}
    notes = render(data, release="grpo-eval", namespace="grpo").notes
    assert "vLLM read HF_TOKEN from Secret hub-credentials (key TOKEN)" in notes
    assert "Ray pods" not in notes.split("Create it once")[0]  # no RayCluster in an evaluation release
    assert "create secret generic hub-credentials --from-literal=TOKEN=" in notes
