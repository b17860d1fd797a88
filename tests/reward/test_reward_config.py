"""Start-up configuration: a bad value stops the process with one clear line; nothing falls back silently."""

from __future__ import annotations

import subprocess
import sys

import pytest
from reward_harness import SERVICE_DIR, free_port, service_env
from reward_service.config import ConfigError, Settings


def _start(env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = service_env({"PORT": str(free_port()), "METRICS_PORT": str(free_port()), **env})
    return subprocess.run([sys.executable, "-m", "reward_service"], cwd=SERVICE_DIR, env=full_env,
                          capture_output=True, text=True, timeout=60)


def test_unknown_backend_exits_at_start_with_clear_message():
    """A typo'd REWARD_BACKEND must stop the process, not silently load a large reward model."""
    result = _start({"REWARD_BACKEND": "math_verfy"})
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "REWARD_BACKEND" in lines[0] and "'math_verfy'" in lines[0] and "math_verify" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("env, names", [
    ({"REWARD_WORKERS": "two"}, ["REWARD_WORKERS", "'two'"]),
    ({"REWARD_HARD_TIMEOUT_S": "1", "REWARD_PARSE_TIMEOUT_S": "1"},
     ["REWARD_HARD_TIMEOUT_S", "REWARD_PARSE_TIMEOUT_S"]),
    ({"REWARD_FAULT_THRESHOLD": "1.5"}, ["REWARD_FAULT_THRESHOLD", "'1.5'"]),
    ({"REWARD_TEST_FAULT_INJECTION": "maybe"}, ["REWARD_TEST_FAULT_INJECTION", "'maybe'"]),
])
def test_bad_setting_exits_with_one_line(env, names):
    """Any malformed setting is a clear one-line error and a non-zero exit, never a traceback or a default."""
    result = _start(env)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert all(name in result.stderr for name in names), result.stderr


ROUTES = {"REWARD_ROUTES": '{"test_math": "math"}'}


def test_defaults():
    settings = Settings.from_env(ROUTES)
    assert (settings.host, settings.port, settings.metrics_port) == ("0.0.0.0", 8000, 9100)
    assert settings.backend == "math_verify"
    assert settings.parse_timeout_s < settings.hard_timeout_s < settings.queue_deadline_s < 120  # slime's timeout
    assert not settings.test_fault_injection


def test_backend_allow_list_is_case_sensitive_and_exact():
    with pytest.raises(ConfigError, match="allowed values: math_verify"):
        Settings.from_env({"REWARD_BACKEND": "reward_model", **ROUTES})
    assert Settings.from_env({"REWARD_BACKEND": " math_verify ", **ROUTES}).backend == "math_verify"
