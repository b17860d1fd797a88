"""The chart's rendered reward-service configuration, read by the service's own settings code (its consumer)."""

from __future__ import annotations

import typing

import pytest
from grpo_stack.schema.components import RewardScorer
from reward_service.config import Settings
from reward_service.routing import scorer_names


def service_env(rendered) -> dict[str, str]:
    deployments = [o.obj for o in rendered.of_kind("Deployment")
                   if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == "reward-service"]
    assert len(deployments) == 1
    container = deployments[0]["spec"]["template"]["spec"]["containers"][0]
    return {item["name"]: item["value"] for item in container["env"]}


def test_rendered_routes_and_sandbox_url_start_the_service(render_values):
    """The routing table and the sandbox settings the chart renders are accepted by the service's start-up
    check (a mismatch would crash-loop the pod), route exactly what the values list, and point code samples at
    this release's sandbox Service."""
    env = service_env(render_values("qwen3-235b"))
    settings = Settings.from_env(env)
    routes = dict(settings.routes)
    assert routes["apps"] == "code" and routes["openai/gsm8k"] == "math"
    assert settings.sandbox_url == "http://grpo-sandbox-fusion.team-a.svc.cluster.local:8080/run_code"


def test_math_only_release_has_no_sandbox(render_values):
    env = service_env(render_values("qwen3-30b"))
    settings = Settings.from_env(env)
    assert settings.sandbox_url is None
    assert set(dict(settings.routes).values()) == {"math"}


def test_schema_scorers_are_the_images_scorers():
    """The values schema offers exactly the scorers the image registers, so a valid values file never names a
    scorer the service refuses at start."""
    assert set(typing.get_args(RewardScorer)) == set(scorer_names())


@pytest.mark.parametrize("name", ["qwen3-30b", "miles-qwen3-4b"])
def test_helm_test_pod_script_passes_against_the_rendered_configuration(render_values, tmp_path, name):
    """The chart's `helm test` script, run against a service started with the rendered routing table, scores its
    known answer (sent as the release's trainer sends it: verl, miles) and sees an unlisted data_source refused."""
    import subprocess
    import sys

    from conftest import base_env
    from reward_harness import ServiceProcess

    rendered = render_values(name)
    env = service_env(rendered)
    pods = [o.obj for o in rendered.of_kind("Pod")
            if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == "reward-service-test"]
    assert len(pods) == 1
    script = pods[0]["spec"]["containers"][0]["args"][0]
    rendered_url = "http://grpo-reward-service.team-a.svc.cluster.local:8000/score"
    assert rendered_url in script
    with ServiceProcess(base_env(REWARD_ROUTES=env["REWARD_ROUTES"]), tmp_path) as service:
        done = subprocess.run([sys.executable, "-c", script.replace(rendered_url, service.url + "/score")],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "scored a known answer" in done.stdout and "refused an unlisted data_source" in done.stdout
