"""reward service -> SandboxFusion: every request the real service sends to `/run_code`, and every reply the test
sandbox returns, fits SandboxFusion's own client models (`sandbox-fusion==0.3.7`, `sandbox_fusion.models`) strictly.

The caller is the real `python -m reward_service` (tests/reward's harness) scoring code samples through its code
route; the peer is tests/reward/sandbox_stub.py, which runs the programs and checks each request and reply with
tests/wires/sandbox_contract.py (and so does it under every other test in tests/reward). Where this stops: the
client's models, not the server image, which cannot run here (tests/wires/sandbox_contract.py says what the
server's own model at the pinned image's date adds and lacks).
"""

from __future__ import annotations

import json

import httpx
import pytest
from reward_harness import TEST_ROUTES, ServiceProcess
from sandbox_stub import SandboxStub

from tests.wires.sandbox_contract import reply_problems, request_problems

CODE_SOURCE = "apps"
ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
SUBTRACT = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
HANG = "```python\nwhile True:\n    pass\n```"
TESTS = json.dumps({"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]})
# The request the service sent before this check existed: memory_limit_MB is in neither the client's model nor the
# pinned server's, so the server dropped it unread.
OLD_REQUEST = {"code": "print(1)", "language": "python", "stdin": None, "compile_timeout": 1.0, "run_timeout": 1.0,
               "memory_limit_MB": 1024, "files": {}, "fetch_files": []}


@pytest.fixture(scope="module")
def sandbox():
    with SandboxStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def coding_service(sandbox, tmp_path_factory):
    env = {"REWARD_WORKERS": "1", "REWARD_ROUTES": json.dumps({**TEST_ROUTES, CODE_SOURCE: "code"}),
           "REWARD_SANDBOX_URL": sandbox.url, "REWARD_SANDBOX_RETRIES": "1", "REWARD_SANDBOX_RUN_TIMEOUT_S": "1"}
    with ServiceProcess(env, tmp_path_factory.mktemp("wire")) as server:
        yield server


@pytest.mark.parametrize("mode, response, reward, status", [
    ("normal", ADD, 1.0, "ok"),
    ("normal", SUBTRACT, 0.0, "wrong"),
    ("normal", HANG, 0.0, "wrong"),  # time limit: a Failed reply with run_result TimeLimitExceeded
    ("sandbox_error", ADD, None, "sandbox_unavailable"),
])
def test_every_request_and_reply_fits_sandbox_fusions_models(coding_service, sandbox, mode, response, reward,
                                                             status):
    sandbox.mode, before = mode, len(sandbox.requests)
    try:
        reply = coding_service.post({"data_source": CODE_SOURCE, "response": response, "label": TESTS})
    finally:
        sandbox.mode = "normal"
    assert reply.json()["status"] == status, reply.text
    assert reply.json().get("reward") == reward
    sent = sandbox.requests[before:]
    assert sent, "the sample never reached the sandbox"
    assert [p for body in sent for p in request_problems(body, every_field=True)] == []
    assert sandbox.violations == []


def test_the_old_request_is_refused_by_the_strict_check(sandbox):
    """Mutation check: the field the service used to send fails the wire, by name."""
    found = request_problems(OLD_REQUEST, every_field=True)
    assert found and all("memory_limit_MB" in p for p in found), found
    before = len(sandbox.violations)
    answer = httpx.post(sandbox.url, json=OLD_REQUEST, timeout=10)
    assert answer.status_code == 422 and "memory_limit_MB" in answer.text
    assert len(sandbox.violations) == before + 1
    del sandbox.violations[before:]  # seen and asserted; the module's sandbox must leave clean


@pytest.mark.parametrize("change, field", [
    (lambda r: r.pop("language"), "language"),                      # required by the model
    (lambda r: r.pop("compile_timeout"), "compile_timeout"),        # left to the server's default
    (lambda r: r.update(run_timeout="10"), "run_timeout"),          # pydantic would coerce it
    (lambda r: r.update(language="python3"), "language"),           # not in SandboxFusion's Language
    (lambda r: r.update(files=[]), "files"),
])
def test_request_check_is_strict(change, field):
    request = {k: v for k, v in OLD_REQUEST.items() if k != "memory_limit_MB"}
    assert request_problems(request, every_field=True) == []
    change(request)
    found = request_problems(request, every_field=True)
    assert found and field in found[0], found


RUN = {"status": "Finished", "execution_time": 0.1, "return_code": 0, "stdout": "3\n", "stderr": ""}
REPLY = {"status": "Success", "message": "", "compile_result": None, "run_result": RUN, "executor_pod_name": None,
         "files": {}}


@pytest.mark.parametrize("reply, field", [
    ({k: v for k, v in REPLY.items() if k != "message"}, "message"),
    ({**REPLY, "exit_code": 0}, "exit_code"),
    ({**REPLY, "status": "Timeout"}, "status"),
    ({**REPLY, "run_result": {**RUN, "memory_kb": 10}}, "run_result.memory_kb"),
    ({**REPLY, "run_result": {**RUN, "status": "OK"}}, "run_result.status"),
])
def test_reply_check_is_strict(reply, field):
    assert reply_problems(REPLY) == []
    found = reply_problems(reply)
    assert found and field in found[0], found
