"""The `helm test` hook of the reward service posts the request the release's trainer sends
(charts/grpo-stack/charts/reward-service/files/trainer-requests.json, the one copy). Here: verl's, built by the
real verl client (images/reward-service/clients/verl_remote_reward.py, baked into images/verl) and compared field by
field; which entry the hook embeds for each framework. miles' side: tests/miles/test_miles_reward_dispatch.py
captures what miles' own remote_rm posts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REQUESTS = Path(__file__).resolve().parents[2] / "charts/grpo-stack/charts/reward-service/files/trainer-requests.json"


def trainer_request(framework: str, source: str) -> dict:
    def named(node):
        if isinstance(node, dict):
            return {k: named(v) for k, v in node.items()}
        return source if node == "__SOURCE__" else node

    return named(json.loads(REQUESTS.read_text())[framework])


def test_verl_entry_is_what_the_verl_client_sends(monkeypatch):
    import verl_remote_reward as client

    sent = []
    monkeypatch.setattr(client, "score_remote", lambda payload: sent.append(payload) or {"reward": 1.0})
    want = trainer_request("verl", "openai/gsm8k")
    client.compute_score("openai/gsm8k", want["response"], want["label"], extra_info={"index": 0})
    assert sent == [want]


@pytest.mark.parametrize("name, framework", [("qwen3-30b", "verl"), ("miles-qwen3-4b", "miles")])
def test_hook_embeds_the_configured_trainers_request(render_values, name, framework):
    rendered = render_values(name)
    (pod,) = [o.obj for o in rendered.of_kind("Pod")
              if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == "reward-service-test"]
    script = pod["spec"]["containers"][0]["args"][0]
    embedded = next(line for line in script.splitlines() if line.strip().startswith("request = json.loads("))
    literal = embedded.split("json.loads(", 1)[1].rsplit(")", 1)[0]
    assert json.loads(json.loads(literal)) == json.loads(REQUESTS.read_text())[framework]
