"""Every reward-service value the chart's schema accepts is one the service's own start-up check accepts: a value
at either end of a schema range, rendered by the chart, must start the service (the predecessor's failure mode:
a values file that lints clean and a pod that exits 2 at start, crash-looping until someone reads its log)."""

from __future__ import annotations

import json

import pytest
from grpo_stack.paths import REPO_ROOT
from reward_service.config import ConfigError, Settings

from tests.reward.test_reward_chart import service_env

SCHEMA = json.loads((REPO_ROOT / "charts/grpo-stack/charts/reward-service/values.schema.json").read_text())
# Every reward-service key the chart renders into a REWARD_* variable with a numeric range.
NUMERIC_KEYS = ["workers", "hardTimeoutSeconds", "sandbox.concurrency", "sandbox.retries",
                "sandbox.runTimeoutSeconds", "sandbox.memoryMb", "sandbox.maxTests"]
STEP = 0.001  # above an exclusive minimum


def _property(key: str) -> dict:
    node = SCHEMA
    for part in key.split("."):
        node = node["properties"][part]
        if "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _ends(key: str) -> list[float]:
    prop = _property(key)
    integer = prop["type"] == "integer"
    low = prop.get("minimum", prop.get("exclusiveMinimum", 0) + (1 if integer else STEP))
    assert "maximum" in prop, f"reward-service.{key} has no maximum in the schema"
    return [low, prop["maximum"]]


CASES = [(key, value) for key in NUMERIC_KEYS for value in _ends(key)]


@pytest.mark.parametrize("key, value", CASES, ids=[f"{k}={v:g}" for k, v in CASES])
def test_schema_range_ends_start_the_service(render_values, key, value):
    """A hardTimeoutSeconds the schema accepted (anything above 0) at or below math-verify's 1 s parse timeout
    made the service refuse to start; every end of every range is rendered and started here instead."""
    env = service_env(render_values("qwen3-235b", {f"reward-service.{key}": value}))
    try:
        Settings.from_env(env)
    except ConfigError as error:
        pytest.fail(f"reward-service.{key}: {value:g} passes the values schema but the service refuses it: {error}")


def test_reward_clients_outwait_the_service(render_values):
    """A client that gives up before the service answers retries a sample the service is still scoring: the
    retry doubles the load exactly when the service is saturated. The verl client's per-attempt timeout must
    outlast the service's queue deadline plus the longest per-sample kill the schema allows, and the chart must
    leave the queue deadline at the image's default (it renders no REWARD_QUEUE_DEADLINE_S)."""
    import verl_remote_reward

    env = service_env(render_values("qwen3-235b"))
    assert "REWARD_QUEUE_DEADLINE_S" not in env
    longest_kill = _property("hardTimeoutSeconds")["maximum"]
    assert verl_remote_reward.DEFAULT_TIMEOUT_S > Settings.queue_deadline_s + longest_kill


def test_miles_reward_client_outwaits_the_service():
    """miles' `--rm-url` client (radixark/miles dec268f7, miles/rollout/rm_hub/__init__.py `remote_rm`) opens
    `aiohttp.ClientSession()` with no timeout of its own, so aiohttp's default applies (a 300 s total since aiohttp
    3.3), and `raise_for_status()` turns the service's 5xx faults into a failed sample, never a reward. That
    default must outlast the service's queue deadline plus the longest per-sample kill the schema allows."""
    import aiohttp.client

    assert aiohttp.client.DEFAULT_TIMEOUT.total > Settings.queue_deadline_s + _property("hardTimeoutSeconds")["maximum"]
