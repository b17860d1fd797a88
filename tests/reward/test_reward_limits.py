"""Input limits: huge integers, deep nesting (body, label, batch item), oversized labels and bodies.

Prevents the reviewed failure: a 5,000-digit integer label or JSON nested a few hundred levels returned a plain-text
500 (int digit limit; RecursionError), which the trainer reads as a service fault.
"""

from __future__ import annotations

import httpx
import pytest


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def _post_raw(service, body: str, path: str = "/score") -> httpx.Response:
    return httpx.post(service.url + path, content=body.encode(), timeout=60)


def test_5000_digit_integer_label_is_scored_not_500(service):
    digits = "7" * 5000
    reply = _post_raw(service, f'{{"data_source": "test_math", "response": "\\\\boxed{{1}}", "label": {digits}}}')
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] in {"wrong", "timeout", "screened"}


def test_5000_digit_integer_label_equal_to_the_answer(service):
    digits = "1" + "0" * 4999
    reply = _post_raw(service, f'{{"data_source": "test_math", "response": "\\\\boxed{{10^{{4999}}}}", '
                               f'"label": {digits}}}')
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("field", ["label", "response", "metadata"])
def test_deeply_nested_field_is_a_status(service, field):
    """A few hundred levels in one field: 200 with status bad_input naming the field."""
    body = f'{{"data_source": "test_math", "response": "1", "label": 1, "{field}": {_nested(300)}}}'
    reply = _post_raw(service, body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "bad_input" and field in reply.json()["detail"]


def test_deeply_nested_batch_item_fails_only_itself(service):
    body = ('{"samples": [{"data_source": "test_math", "response": "\\\\boxed{2}", "label": 2}, '
            f'{{"data_source": "test_math", "response": "1", "label": {_nested(300)}}}]}}')
    reply = _post_raw(service, body, "/score/batch")
    assert reply.status_code == 200, reply.text
    assert [r["status"] for r in reply.json()["results"]] == ["ok", "bad_input"]


def test_body_too_deep_for_the_parser_is_a_400(service):
    reply = _post_raw(service, f'{{"data_source": "test_math", "label": {_nested(100_000)}}}')
    assert reply.status_code == 400
    assert reply.json()["status"] == "bad_request" and "nested too deeply" in reply.json()["detail"]


def test_oversized_label_is_bad_label(service):
    reply = service.post({"response": "\\boxed{1}", "label": "1" * 20_000})
    assert (reply.status_code, reply.json()["status"]) == (200, "bad_label")


def test_oversized_body_is_a_413_before_it_is_read(service):
    """A declared body past REWARD_MAX_BODY_BYTES is refused from its headers, without reading the body."""
    import socket

    with socket.create_connection(("127.0.0.1", service.port), timeout=30) as sock:
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000000000000\r\n\r\n{")
        reply = b""
        while b"\r\n\r\n" not in reply or b"too_large" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b'"status":"too_large"' in reply
