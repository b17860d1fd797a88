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


def _timing(rendered) -> dict[str, float]:
    deployment = next(o.obj for o in rendered.of_kind("Deployment")
                      if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == "reward-service")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    return {"client": float(deployment["metadata"]["annotations"]["grpo-stack.io/reward-client-timeout-seconds"]),
            "deadline": float(service_env(rendered)["REWARD_DEADLINE_S"]),
            "preStop": container["lifecycle"]["preStop"]["sleep"]["seconds"],
            "grace": pod["terminationGracePeriodSeconds"]}


def _ray_env(rendered) -> dict[str, str]:
    cluster = rendered.of_kind("RayCluster")[0].obj
    container = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    return {item["name"]: item.get("value") for item in container["env"]}


@pytest.mark.parametrize("timeout_s", [None, 200, 600])
def test_verl_deadlines_follow_the_trainer_timeout(render_values, timeout_s):
    """The one value: the verl client's timeout (GRPO_REWARD_TIMEOUT_S on the Ray pods, from
    global.job.reward.timeoutSeconds; absent, the client's own default). The service's deadline, the preStop delay
    and the grace period are derived from it: a request is answered before the client gives up, even one accepted
    as the pod starts terminating, and the kubelet never kills a request the pod accepted. The rendered service
    starts with them."""
    import verl_remote_reward

    rendered = render_values("qwen3-30b", {} if timeout_s is None else {"global.job.reward.timeoutSeconds": timeout_s})
    timing = _timing(rendered)
    client = timeout_s or verl_remote_reward.DEFAULT_TIMEOUT_S
    assert timing["client"] == client
    assert _ray_env(rendered).get("GRPO_REWARD_TIMEOUT_S") == (None if timeout_s is None else str(timeout_s))
    assert timing["deadline"] == client // 2
    assert timing["preStop"] + timing["deadline"] < client
    assert timing["grace"] >= timing["preStop"] + timing["deadline"]
    settings = Settings.from_env(service_env(rendered))
    assert settings.deadline_s == timing["deadline"] and settings.queue_deadline_s > 0


def test_miles_deadlines_follow_its_clients_timeout(render_values):
    """miles' `--rm-url` client (radixark/miles 31f1ca9, miles/rollout/rm_hub/__init__.py `remote_rm`) opens
    `aiohttp.ClientSession()` with no timeout of its own, so aiohttp's default applies (a 300 s total), and it does
    not retry. The chart derives the service's deadlines from exactly that."""
    import aiohttp.client

    timing = _timing(render_values("miles-qwen3-4b"))
    assert timing["client"] == aiohttp.client.DEFAULT_TIMEOUT.total
    assert timing["preStop"] + timing["deadline"] < timing["client"]
    assert timing["grace"] >= timing["preStop"] + timing["deadline"]
