"""The reward function images/verl bakes, loaded and called the way verl 0.9.1 does, against a real service.

verl 0.9.1 builds its reward loop only after the workers initialise, so the start-up tier cannot reach it.
This test takes the reward overrides from the command the builder emits for a values file that scores through
the reward service, maps the image path to the file the Dockerfile copies there, and runs verl's own
`load_reward_manager` + `run_single` in the start-up venv on tokenised samples, against a real
`python -m reward_service` on 127.0.0.1 (tests/reward's harness).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.job.verl import REMOTE_REWARD_FN

from .conftest import REPO_ROOT, ray_env, startup_python
from .test_verl_startup import built_job, reward_file_in_image

pytestmark = pytest.mark.startup

REWARD_TESTS = REPO_ROOT / "tests" / "reward"
SERVICE_VALUES = "qwen3-30b"  # reward.kind: service


@pytest.fixture(scope="module")
def reward_service(tmp_path_factory):
    sys.path.insert(0, str(REWARD_TESTS))
    try:
        from reward_harness import ServiceProcess  # tests/reward's harness: the real server on loopback
    finally:
        sys.path.remove(str(REWARD_TESTS))
    env = {"REWARD_WORKERS": "1", "REWARD_HARD_TIMEOUT_S": "10"}
    with ServiceProcess(env, tmp_path_factory.mktemp("reward")) as server:
        yield server


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tok")
    run = subprocess.run([str(startup_python()), str(Path(__file__).with_name("build_fixtures.py")), str(out),
                          "--arch", "qwen3", "--rows", "2"], capture_output=True, text=True, timeout=300,
                         env=ray_env())
    assert run.returncode == 0, run.stderr[-3000:]
    return out / "model"


def reward_overrides(shipped_values) -> tuple[str, list[str]]:
    spec, job = built_job(shipped_values, SERVICE_VALUES)
    image_path, repo_path = reward_file_in_image()
    config_name = next(a for a in job.argv() if a.startswith("--config-name=")).split("=", 1)[1]
    overrides = [a.replace(image_path, str(repo_path)) for a in job.argv()[len(job.entrypoint):]
                 if a.startswith("reward.")]
    return config_name, overrides


def score(tokenizer_dir, service_url: str, shipped_values, samples: list[dict]) -> dict:
    config_name, overrides = reward_overrides(shipped_values)
    assert any(o.startswith("reward.custom_reward_function.path=") for o in overrides), overrides
    request = {"config_name": config_name, "overrides": overrides, "tokenizer": str(tokenizer_dir),
               "samples": samples}
    env = {**ray_env(), "GRPO_REWARD_URL": service_url, "GRPO_REWARD_RETRIES": "1"}
    run = subprocess.run([str(startup_python()), str(Path(__file__).with_name("reward_worker.py"))],
                         input=json.dumps(request), capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_verl_loads_the_baked_client_and_scores_real_samples(reward_service, tokenizer_dir, shipped_values):
    """Right and wrong answers score 1.0 and 0.0 through verl's reward manager (prevents: a client whose
    signature or return type verl cannot use, found only at the first rollout on GPUs)."""
    samples = [
        {"data_source": "openai/gsm8k", "prompt": "What is 3 + 4?", "response": "3 + 4 = 7, so \\boxed{7}",
         "ground_truth": "7"},
        {"data_source": "openai/gsm8k", "prompt": "What is 3 + 4?", "response": "I think \\boxed{8}",
         "ground_truth": "7"},
    ]
    out = score(tokenizer_dir, reward_service.url + "/score", shipped_values, samples)
    _, repo_path = reward_file_in_image()
    assert out["function"] == f"{repo_path}:compute_score", out
    assert out["manager"] == "NaiveRewardManager"
    assert [r.get("reward_score") for r in out["results"]] == [1.0, 0.0], out["results"]


def test_unreachable_service_fails_the_step_instead_of_scoring_zero(tokenizer_dir, shipped_values):
    """With the service down the reward manager raises (prevents training on a silent flat-zero reward)."""
    samples = [{"data_source": "openai/gsm8k", "prompt": "1+1?", "response": "\\boxed{2}", "ground_truth": "2"}]
    out = score(tokenizer_dir, "http://127.0.0.1:9/score", shipped_values, samples)
    assert "error" in out["results"][0], out
    assert "RemoteRewardError" in out["results"][0]["error"]


def test_command_names_the_image_path():
    assert reward_file_in_image()[0] == REMOTE_REWARD_FN
