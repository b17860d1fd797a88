"""The request shapes slime, miles and verl really send, and the replies they expect."""

from __future__ import annotations

import inspect

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reward_harness import metric_value
from reward_service.app import create_app
from reward_service.config import Settings
from reward_service.metrics import INPUT_STATUSES

CHAT_PROMPT = [{"role": "system", "content": "Reason step by step."}, {"role": "user", "content": "What is 6*7?"}]

# (case id, request body, expected reward, expected status)
CASES = [
    ("helm-test", {"response": "The answer is \\boxed{42}", "label": 42}, 1.0, "ok"),
    ("slime-int-label", {"prompt": "What is 6*7?", "response": "6*7 = \\boxed{42}", "label": 42}, 1.0, "ok"),
    ("miles-chat-prompt", {"prompt": CHAT_PROMPT, "response": "So \\boxed{42}.", "label": "42"}, 1.0, "ok"),
    ("float-label", {"response": "\\boxed{3.5}", "label": 3.5}, 1.0, "ok"),
    ("float-label-as-fraction", {"response": "\\boxed{\\frac{7}{2}}", "label": 3.5}, 1.0, "ok"),
    ("integral-float-label", {"response": "\\boxed{42}", "label": 42.0}, 1.0, "ok"),
    ("list-label-any-of", {"response": "\\boxed{2}", "label": [1, 2]}, 1.0, "ok"),
    ("list-label-none-match", {"response": "\\boxed{3}", "label": [1, 2]}, 0.0, "wrong"),
    ("dict-label", {"response": "\\boxed{0.5}", "label": {"ground_truth": "\\frac{1}{2}"}}, 1.0, "ok"),
    ("fraction-equivalent", {"response": "\\boxed{\\frac{2}{4}}", "label": "\\frac{1}{2}"}, 1.0, "ok"),
    ("boxed-label", {"response": "\\boxed{0.75}", "label": "\\boxed{\\frac{3}{4}}"}, 1.0, "ok"),
    ("dfrac", {"response": "\\boxed{\\dfrac{3}{4}}", "label": "3/4"}, 1.0, "ok"),
    ("set-permuted", {"response": "\\boxed{\\{3, 1, 2\\}}", "label": "\\{1,2,3\\}"}, 1.0, "ok"),
    ("interval", {"response": "\\boxed{(1, 3]}", "label": "(1,3]"}, 1.0, "ok"),
    ("interval-wrong-bracket", {"response": "\\boxed{[1, 3]}", "label": "(1,3]"}, 0.0, "wrong"),
    ("sqrt", {"response": "\\boxed{\\frac{1}{2}\\sqrt{3}}", "label": "\\frac{\\sqrt{3}}{2}"}, 1.0, "ok"),
    ("wrong-answer", {"response": "\\boxed{41}", "label": 42}, 0.0, "wrong"),
    ("no-answer", {"response": "I cannot solve this.", "label": 42}, 0.0, "no_answer"),
    ("empty-response", {"response": "", "label": 42}, 0.0, "no_answer"),
    ("null-response", {"response": None, "label": 42}, 0.0, "no_answer"),
    ("int-response", {"response": 42, "label": 42}, 1.0, "ok"),
    ("chat-response", {"response": [{"role": "assistant", "content": "\\boxed{42}"}], "label": 42}, 1.0, "ok"),
    ("no-label-null", {"response": "\\boxed{42}", "label": None}, 0.0, "no_label"),
    ("no-label-missing", {"response": "\\boxed{42}"}, 0.0, "no_label"),
    ("no-label-empty", {"response": "\\boxed{42}", "label": ""}, 0.0, "no_label"),
    ("no-label-empty-list", {"response": "\\boxed{42}", "label": []}, 0.0, "no_label"),
    ("no-label-unknown-dict", {"response": "\\boxed{42}", "label": {"style": "rule"}}, 0.0, "no_label"),
    ("metadata-and-extra-fields", {"response": "\\boxed{42}", "label": 42, "metadata": {"rm_type": "remote_rm"},
                                   "sample_id": 7}, 1.0, "ok"),
]


@pytest.mark.parametrize("body, reward, status", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_request_shapes_get_expected_reward(service, body, reward, status):
    """An integer, float, list or dict label must score, not 422: a 422 fails the whole rollout batch."""
    reply = service.post(body)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert (data["reward"], data["status"]) == (reward, status), data
    assert isinstance(data["reward"], float)


def test_plain_curl_body_without_content_type_is_scored(service):
    """A client that omits Content-Type (curl -d, a helm test) must still be scored, not rejected."""
    body = b'{"response":"The answer is \\\\boxed{42}","label":42,"data_source":"test_math"}'
    reply = httpx.post(service.url + "/score", content=body,
                       timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "ok"


def test_batch_scores_in_order(service):
    """The batch endpoint returns one result per sample, in request order, with the same verdicts as /score."""
    bodies = [case[1] for case in CASES]
    reply = service.post({"samples": bodies}, path="/score/batch")
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert [(r["reward"], r["status"]) for r in results] == [(case[2], case[3]) for case in CASES]


@pytest.mark.parametrize("body, problem", [
    (b"not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
])
def test_malformed_body_is_a_clear_400(service, body, problem):
    """A body that is not a JSON object gets a one-line reason, never a traceback or an echo of the body."""
    reply = httpx.post(service.url + "/score", content=body, timeout=30)
    assert reply.status_code == 400
    assert problem in reply.json()["detail"]


def test_batch_needs_a_sample_list(service):
    reply = service.post({"samples": "nope"}, path="/score/batch")
    assert reply.status_code == 400
    assert "samples" in reply.json()["detail"]


def test_fault_injection_is_off_by_default(service):
    """The test-only fault hook must do nothing unless REWARD_TEST_FAULT_INJECTION is set."""
    reply = service.post({"response": "\\boxed{42}", "label": 42, "metadata": {"inject_fault": "raise"}})
    assert reply.status_code == 200
    assert reply.json()["status"] == "ok"


def test_probes_and_metrics(service):
    """Liveness, readiness and both metrics endpoints answer on their documented ports."""
    assert httpx.get(service.url + "/health", timeout=10).json() == {"status": "ok", "workers_alive": 2}
    assert httpx.get(service.url + "/ready", timeout=10).json() == {"status": "ready"}
    service.post({"response": "\\boxed{1}", "label": 1})
    for url in (service.url + "/metrics", f"http://127.0.0.1:{service.metrics_port}/metrics"):
        text = httpx.get(url, timeout=10).text
        assert metric_value(text, "reward_scores_total", 'status="ok"') >= 1
        for name in ("reward_score_latency_seconds_count", "reward_queue_depth", "reward_running"):
            metric_value(text, name)
        metric_value(text, "reward_pool_restarts_total", 'reason="hard_timeout"')


def test_every_handler_is_async():
    """No sync handler may exist: FastAPI runs those in a threadpool, where math-verify's timeouts cannot work."""
    app = create_app(Settings())
    endpoints = [route.endpoint for route in app.fastapi.routes if hasattr(route, "endpoint")]
    endpoints += list(app.score_handlers.values())
    assert len(endpoints) >= 5
    assert all(inspect.iscoroutinefunction(endpoint) for endpoint in endpoints)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=JSON_VALUES, response=JSON_VALUES, label=JSON_VALUES, metadata=JSON_VALUES)
def test_any_json_fields_get_a_reward(service, prompt, response, label, metadata):
    """Whatever JSON a trainer puts in the fields gets 200 and a reward: never a 422, never a 500."""
    reply = service.post({"prompt": prompt, "response": response, "label": label, "metadata": metadata})
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["status"] in INPUT_STATUSES
    assert data["reward"] in (0.0, 1.0)
