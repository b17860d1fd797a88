"""Routing by data_source (exact match, no default) and code scoring through a SandboxFusion /run_code server.

The sandbox is tests/reward/sandbox_stub.py on loopback: it runs the code for real and follows the documented
RunCodeResponse contract, and can be switched into each infrastructure fault.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
import verl_remote_reward
from conftest import base_env
from reward_harness import TEST_ROUTES, ServiceProcess, free_port
from sandbox_stub import SandboxStub
from verl_remote_reward import RemoteRewardError, compute_score

CODE_SOURCE = "apps"
ROUTES = {**TEST_ROUTES, CODE_SOURCE: "code"}
RETRIES = 1
ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
TESTS = json.dumps({"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]})


def _env(sandbox_url: str, **extra: str) -> dict[str, str]:
    settings = {"REWARD_ROUTES": json.dumps(ROUTES), "REWARD_SANDBOX_URL": sandbox_url,
                "REWARD_SANDBOX_RETRIES": str(RETRIES), "REWARD_SANDBOX_RUN_TIMEOUT_S": "1"}
    return base_env(**{**settings, **extra})


@pytest.fixture(scope="module")
def sandbox():
    with SandboxStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def coding_service(sandbox, tmp_path_factory):
    with ServiceProcess(_env(sandbox.url), tmp_path_factory.mktemp("coding")) as server:
        yield server


@pytest.fixture
def normal_sandbox(sandbox):
    sandbox.mode = "normal"
    yield sandbox
    sandbox.mode = "normal"


def _code(service, response: str, label=TESTS) -> httpx.Response:
    return service.post({"data_source": CODE_SOURCE, "response": response, "label": label})


def test_negative_control_a_similar_source_is_not_routed(coding_service):
    """numina_cn_k12_h2 must not be scored as numina_olympiads (the predecessor's suffix-strip made that a
    real risk): only the exact source is routed; the other is an error naming the source, never a default."""
    good = coding_service.post({"data_source": "numina_olympiads", "response": "\\boxed{3}", "label": 3})
    assert (good.status_code, good.json()["status"], good.json()["scorer"]) == (200, "ok", "math")
    for near_miss in ("numina_cn_k12_h2", "numina_olympiads_h2", "numina", "Numina_Olympiads", "numina_olympiads "):
        reply = coding_service.post({"data_source": near_miss, "response": "\\boxed{3}", "label": 3})
        assert reply.status_code == 400, (near_miss, reply.text)
        assert reply.json()["status"] == "unknown_source"
        assert repr(near_miss) in reply.json()["detail"]


@pytest.mark.parametrize("sample, problem", [
    ({"response": "\\boxed{3}", "label": 3}, "names no data_source"),
    ({"data_source": "test_math", "metadata": {"data_source": "openai/gsm8k"}, "response": "1", "label": 1},
     "conflicting"),
    ({"data_source": 7, "response": "1", "label": 1}, "must be a string"),
])
def test_missing_or_ambiguous_source_is_an_error(coding_service, sample, problem):
    """A sample that does not say where it comes from is refused, not scored by a guessed scorer."""
    reply = httpx.post(coding_service.url + "/score", json=sample, timeout=30)
    assert (reply.status_code, reply.json()["status"]) == (400, "unknown_source")
    assert problem in reply.json()["detail"]


def test_source_may_ride_in_the_label_for_miles(coding_service):
    """miles and slime send only prompt/response/label, so a label object may carry the data_source."""
    label = {"ground_truth": "12", "data_source": "openai/gsm8k"}
    reply = httpx.post(coding_service.url + "/score", json={"response": "\\boxed{12}", "label": label}, timeout=30)
    assert (reply.status_code, reply.json()["status"]) == (200, "ok")


def test_custom_scorer_route(coding_service):
    ok = coding_service.post({"data_source": "test_exact", "response": "  Paris ", "label": "paris"}).json()
    wrong = coding_service.post({"data_source": "test_exact", "response": "Lyon", "label": "paris"}).json()
    assert (ok["reward"], ok["status"], ok["scorer"]) == (1.0, "ok", "exact_match")
    assert (wrong["reward"], wrong["status"]) == (0.0, "wrong")


@pytest.mark.parametrize("response, label, reward, status", [
    (ADD, TESTS, 1.0, "ok"),
    ("```python\na, b = map(int, input().split())\nprint(a * b + 1)\n```", TESTS, 0.5, "wrong"),  # 1*2+1 = 3
    ("```python\nraise SystemExit(3)\n```", TESTS, 0.0, "wrong"),                                 # Failed, rc 3
    ("```python\nwhile True:\n    pass\n```", TESTS, 0.0, "wrong"),                                # TimeLimitExceeded
    ("```python\nprint(\n```", TESTS, 0.0, "wrong"),                                               # syntax error
    ("I would add the numbers.", TESTS, 0.0, "no_answer"),
    (ADD, {"ground_truth": TESTS}, 1.0, "ok"),                                                     # verl's layout
    (ADD, "not tests", 0.0, "bad_label"),
    (ADD, json.dumps({"inputs": ["1"], "outputs": ["1"], "fn_name": "f"}), 0.0, "bad_label"),
])
def test_program_outcomes_are_verdicts(coding_service, normal_sandbox, response, label, reward, status):
    """Success, wrong output, non-zero exit, time limit and compile errors are the program's verdicts (HTTP 200)."""
    reply = _code(coding_service, response, label)
    assert reply.status_code == 200, reply.text
    assert (reply.json()["reward"], reply.json()["status"]) == (reward, status), reply.json()


@pytest.mark.parametrize("mode, outcome, attempts", [
    ("sandbox_error", "sandbox_error", RETRIES + 1),
    ("http_500", "http_5xx", RETRIES + 1),
])
def test_sandbox_faults_are_service_faults_never_zero(coding_service, sandbox, mode, outcome, attempts):
    """SandboxError and 5xx are retried with a bound, then answered 502 sandbox_unavailable and counted:
    verl's scorer turned exactly these into reward 0.0, training on a sandbox outage as if the code were wrong."""
    sandbox.mode = mode
    try:
        before_calls = sandbox.calls
        before = coding_service.metric("reward_sandbox_calls_total", f'outcome="{outcome}"')
        reply = _code(coding_service, ADD, json.dumps({"inputs": ["1 2"], "outputs": ["3"]}))
        assert (reply.status_code, reply.json()["status"]) == (502, "sandbox_unavailable"), reply.text
        assert "reward" not in reply.json()
        assert sandbox.calls - before_calls == attempts
        assert coding_service.metric("reward_sandbox_calls_total", f'outcome="{outcome}"') - before == attempts
        assert coding_service.metric("reward_scores_total", 'status="sandbox_unavailable"') >= 1
    finally:
        sandbox.mode = "normal"


def test_unready_while_the_sandbox_fails_then_ready_again(coding_service, sandbox):
    """A sandbox fault takes the pod out of the Service until the sandbox answers again."""
    sandbox.mode = "sandbox_error"
    try:
        assert _code(coding_service, ADD).status_code == 502
        ready = httpx.get(coding_service.url + "/ready", timeout=10)
        assert ready.status_code == 503 and "sandbox" in json.dumps(ready.json())
    finally:
        sandbox.mode = "normal"
    assert httpx.get(coding_service.url + "/ready", timeout=10).status_code == 200
    assert _code(coding_service, ADD).json()["status"] == "ok"


def test_sandbox_timeout_is_a_fault(sandbox, tmp_path):
    """A sandbox that never answers is a fault after the HTTP deadline, not a wrong answer."""
    sandbox.mode = "slow"
    try:
        with ServiceProcess(_env(sandbox.url, REWARD_SANDBOX_RETRIES="0"), tmp_path) as service:
            started = time.monotonic()
            reply = _code(service, ADD, json.dumps({"inputs": ["1 2"], "outputs": ["3"]}))
            assert (reply.status_code, reply.json()["status"]) == (502, "sandbox_unavailable")
            assert "did not answer in time" in reply.json()["detail"]
            assert time.monotonic() - started < 20
            assert service.metric("reward_sandbox_calls_total", 'outcome="timeout"') == 1
    finally:
        sandbox.mode = "normal"


def test_refused_connection_is_a_fault_and_the_verl_client_raises(tmp_path, monkeypatch):
    """Nothing listens at the sandbox URL: 502 after the bounded retries, and verl's reward function raises
    instead of returning 0.0."""
    dead_url = f"http://127.0.0.1:{free_port()}/run_code"
    with ServiceProcess(_env(dead_url), tmp_path) as service:
        reply = _code(service, ADD)
        assert (reply.status_code, reply.json()["status"]) == (502, "sandbox_unavailable")
        assert "cannot reach the sandbox" in reply.json()["detail"]
        assert service.metric("reward_sandbox_calls_total", 'outcome="unreachable"') == 2 * (RETRIES + 1)  # 2 cases
        monkeypatch.setenv("GRPO_REWARD_URL", service.url + "/score")
        with pytest.raises(RemoteRewardError, match="HTTP 502"):
            compute_score(CODE_SOURCE, ADD, TESTS)
        # Math keeps working while the sandbox is down.
        assert compute_score("openai/gsm8k", "\\boxed{4}", "4") == 1.0


def test_verl_client_scores_code_through_the_service(coding_service, normal_sandbox, monkeypatch):
    monkeypatch.setenv("GRPO_REWARD_URL", coding_service.url + "/score")
    assert compute_score(CODE_SOURCE, ADD, TESTS) == 1.0
    monkeypatch.setattr(verl_remote_reward.time, "sleep", lambda _seconds: None)
    with pytest.raises(RemoteRewardError, match="HTTP 400.*not in the routing table"):
        compute_score("numina_cn_k12_h2", "\\boxed{1}", "1")


@pytest.mark.parametrize("routes, sandbox_url, problem", [
    ({CODE_SOURCE: "code"}, "", "REWARD_SANDBOX_URL is not set"),
    ({"a": "math_verify"}, "", "unknown scorer"),
    ({}, "", "non-empty"),
])
def test_bad_routing_table_stops_the_service(routes, sandbox_url, problem):
    from reward_service.config import ConfigError, Settings

    with pytest.raises(ConfigError, match=problem):
        Settings.from_env({"REWARD_ROUTES": json.dumps(routes), "REWARD_SANDBOX_URL": sandbox_url})
    with pytest.raises(ConfigError, match="REWARD_ROUTES is not set"):
        Settings.from_env({})


def test_graded_custom_scorer_route(coding_service):
    """chrf gives partial credit: a near miss scores between a miss and a match, so a group's rewards differ."""
    def score(response):
        return coding_service.post({"data_source": "test_chrf", "response": response, "label": "Ouagadougou"}).json()

    match, near, far, empty = score("  ouaga dougou "), score("Ouagadugu"), score("Lyon"), score(" ")
    assert (match["reward"], match["status"], match["scorer"]) == (1.0, "ok", "chrf")
    assert 0.0 < far["reward"] < near["reward"] < 1.0 and near["status"] == "wrong"
    assert (empty["reward"], empty["status"]) == (0.0, "no_answer")
