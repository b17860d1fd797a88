"""The supervisor's GPU-idle reading against a real Ray head (the recipes tier's, on loopback): the node summary it
asks for answers with the head node alive and its GPU list, which the reader turns into "no reading" on this
machine (no GPU: Ray's reporter lists none), so the idle clock gives no verdict.

Where it stops: no GPU runs here, so no utilisation value comes from a real reporter; the values' shape is Ray
2.53.0's GpuUtilizationInfo (tests/supervise/test_gpuidle.py)."""

from __future__ import annotations

import json
import time
import urllib.request

from grpo_stack.supervise.gpuidle import SUMMARY_PATH, IdleClock, dashboard_reader


def answer(address: str) -> dict:
    with urllib.request.urlopen(address + SUMMARY_PATH, timeout=10) as response:
        return json.loads(response.read())


def test_the_head_answers_the_summary_the_reader_reads(ray_head):
    address, _env = ray_head
    deadline = time.monotonic() + 60
    while True:  # the reporter agent sends the node's first stats a few seconds after the head starts
        nodes = answer(address)["data"]["summary"]
        if nodes and all("gpus" in n for n in nodes) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert nodes, "the summary lists no node"
    assert {n["raylet"]["state"] for n in nodes} == {"ALIVE"}
    assert all(isinstance(n["gpus"], list) for n in nodes), [sorted(n) for n in nodes]
    assert dashboard_reader(address)() is None
    assert IdleClock(dashboard_reader(address), below_percent=10)() is None


def test_an_unreachable_dashboard_is_no_reading():
    assert dashboard_reader("http://127.0.0.1:9", timeout=1)() is None
