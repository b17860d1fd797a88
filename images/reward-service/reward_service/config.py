"""Service settings, read once from the environment at start.

Every bad value stops the process with one line naming the variable, the value and what is accepted:
a typo must never fall back to a different behaviour (the predecessor loaded a large reward model when
REWARD_BACKEND was misspelt).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reward_service import routing

# The backends this image can run. A GPU reward model does not belong in a CPU service, so it is not offered.
BACKENDS = ("math_verify",)

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


class ConfigError(ValueError):
    """A setting is missing, malformed or outside what the service accepts."""


@dataclass(frozen=True)
class Settings:
    host: str = "0.0.0.0"
    port: int = 8000
    metrics_port: int = 9100
    backend: str = "math_verify"
    workers: int = 2
    parse_timeout_s: int = 1
    hard_timeout_s: float = 4.0
    worker_memory_mb: int = 2048
    max_in_flight: int = 2048
    # Every sample is answered (or refused) within this many seconds of its request's arrival. The chart derives it
    # from the trainers' reward-client timeout (charts/grpo-stack/charts/reward-service/templates/_deadlines.tpl).
    deadline_s: float = 64.0
    max_response_chars: int = 200_000
    max_batch_size: int = 1024
    max_body_bytes: int = 64 * 1024 * 1024
    max_label_chars: int = 10_000
    max_depth: int = 32
    max_connections: int = 1024
    broken_after_s: float = 30.0
    start_timeout_s: float = 20.0
    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0
    routes: tuple[tuple[str, str], ...] = ()
    sandbox_url: str | None = None
    sandbox_concurrency: int = 16
    sandbox_retries: int = 2
    sandbox_run_timeout_s: float = 10.0
    sandbox_memory_mb: int = 1024
    sandbox_max_tests: int = 10
    fault_window: int = 200
    fault_window_s: float = 120.0
    fault_threshold: float = 0.2
    fault_min_samples: int = 20
    canary_timeout_s: float = 2.0
    log_level: str = "INFO"
    access_log: bool = False
    test_fault_injection: bool = False
    test_break_start_file: str | None = None
    test_slow_start_file: str | None = None

    @property
    def queue_deadline_s(self) -> float:
        """How long after arrival a math sample may still be handed to a worker: it then has the hard timeout left."""
        return self.deadline_s - self.hard_timeout_s

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        reader = _EnvReader(env)
        settings = cls(
            host=reader.text("REWARD_HOST", cls.host),
            port=reader.integer("PORT", cls.port, minimum=1, maximum=65535),
            metrics_port=reader.integer("METRICS_PORT", cls.metrics_port, minimum=1, maximum=65535),
            backend=reader.choice("REWARD_BACKEND", cls.backend, BACKENDS),
            workers=reader.integer("REWARD_WORKERS", default_workers(), minimum=1, maximum=256),
            parse_timeout_s=reader.integer("REWARD_PARSE_TIMEOUT_S", cls.parse_timeout_s, minimum=1, maximum=60),
            hard_timeout_s=reader.number("REWARD_HARD_TIMEOUT_S", cls.hard_timeout_s, minimum=0.5, maximum=300),
            worker_memory_mb=reader.integer("REWARD_WORKER_MEMORY_MB", cls.worker_memory_mb, minimum=256),
            max_in_flight=reader.integer("REWARD_MAX_IN_FLIGHT", cls.max_in_flight, minimum=1),
            deadline_s=reader.number("REWARD_DEADLINE_S", cls.deadline_s, minimum=2, maximum=3600),
            max_response_chars=reader.integer("REWARD_MAX_RESPONSE_CHARS", cls.max_response_chars, minimum=1000),
            max_batch_size=reader.integer("REWARD_MAX_BATCH_SIZE", cls.max_batch_size, minimum=1),
            max_body_bytes=reader.integer("REWARD_MAX_BODY_BYTES", cls.max_body_bytes, minimum=1024),
            max_label_chars=reader.integer("REWARD_MAX_LABEL_CHARS", cls.max_label_chars, minimum=16),
            max_depth=reader.integer("REWARD_MAX_DEPTH", cls.max_depth, minimum=4, maximum=200),
            max_connections=reader.integer("REWARD_MAX_CONNECTIONS", cls.max_connections, minimum=1),
            broken_after_s=reader.number("REWARD_BROKEN_AFTER_S", cls.broken_after_s, minimum=1, maximum=3600),
            start_timeout_s=reader.number("REWARD_START_TIMEOUT_S", cls.start_timeout_s, minimum=1, maximum=600),
            header_timeout_s=reader.number("REWARD_HEADER_TIMEOUT_S", cls.header_timeout_s, minimum=0.1,
                                           maximum=600),
            body_timeout_s=reader.number("REWARD_BODY_TIMEOUT_S", cls.body_timeout_s, minimum=0.1, maximum=3600),
            routes=_routes(reader.text("REWARD_ROUTES", "")),
            sandbox_url=reader.text("REWARD_SANDBOX_URL", "") or None,
            sandbox_concurrency=reader.integer("REWARD_SANDBOX_CONCURRENCY", cls.sandbox_concurrency, minimum=1,
                                               maximum=1024),
            sandbox_retries=reader.integer("REWARD_SANDBOX_RETRIES", cls.sandbox_retries, minimum=0, maximum=10),
            sandbox_run_timeout_s=reader.number("REWARD_SANDBOX_RUN_TIMEOUT_S", cls.sandbox_run_timeout_s,
                                                minimum=1, maximum=300),
            sandbox_memory_mb=reader.integer("REWARD_SANDBOX_MEMORY_MB", cls.sandbox_memory_mb, minimum=64),
            sandbox_max_tests=reader.integer("REWARD_SANDBOX_MAX_TESTS", cls.sandbox_max_tests, minimum=1),
            fault_window=reader.integer("REWARD_FAULT_WINDOW", cls.fault_window, minimum=1),
            fault_window_s=reader.number("REWARD_FAULT_WINDOW_S", cls.fault_window_s, minimum=1, maximum=86400),
            fault_threshold=reader.number("REWARD_FAULT_THRESHOLD", cls.fault_threshold, minimum=0, maximum=1),
            fault_min_samples=reader.integer("REWARD_FAULT_MIN_SAMPLES", cls.fault_min_samples, minimum=1),
            canary_timeout_s=reader.number("REWARD_CANARY_TIMEOUT_S", cls.canary_timeout_s, minimum=0.1, maximum=60),
            log_level=reader.choice("REWARD_LOG_LEVEL", cls.log_level, ("DEBUG", "INFO", "WARNING", "ERROR"),
                                    normalise=str.upper),
            access_log=reader.flag("REWARD_ACCESS_LOG", cls.access_log),
            test_fault_injection=reader.flag("REWARD_TEST_FAULT_INJECTION", cls.test_fault_injection),
            test_break_start_file=reader.text("REWARD_TEST_BREAK_START_FILE", "") or None,
            test_slow_start_file=reader.text("REWARD_TEST_SLOW_START_FILE", "") or None,
        )
        for name, path in (("REWARD_TEST_BREAK_START_FILE", settings.test_break_start_file),
                           ("REWARD_TEST_SLOW_START_FILE", settings.test_slow_start_file)):
            if path and not settings.test_fault_injection:
                raise ConfigError(f"{name} needs REWARD_TEST_FAULT_INJECTION=1 (test-only)")
        if settings.hard_timeout_s <= settings.parse_timeout_s:
            # The hard kill must leave room for math-verify's own timeout, or every slow input costs a restart.
            raise ConfigError(
                f"REWARD_HARD_TIMEOUT_S={settings.hard_timeout_s:g} must be greater than "
                f"REWARD_PARSE_TIMEOUT_S={settings.parse_timeout_s}"
            )
        if settings.deadline_s <= settings.hard_timeout_s:
            # A math sample must be able to start before its deadline and still finish within it.
            raise ConfigError(
                f"REWARD_DEADLINE_S={settings.deadline_s:g} must be greater than "
                f"REWARD_HARD_TIMEOUT_S={settings.hard_timeout_s:g}"
            )
        try:
            routing.check(settings.routes, settings.sandbox_url)
        except routing.RoutingError as error:
            raise ConfigError(str(error)) from None
        return settings


def _routes(text: str) -> tuple[tuple[str, str], ...]:
    try:
        return routing.parse_routes(text)
    except routing.RoutingError as error:
        raise ConfigError(str(error)) from None


def default_workers() -> int:
    """One worker per CPU the container may use: the cgroup quota if there is one, else the CPU affinity."""
    cpus = len(os.sched_getaffinity(0))
    quota = _cgroup_cpu_quota(Path("/sys/fs/cgroup/cpu.max"))
    return max(1, min(cpus, quota) if quota else cpus)


def _cgroup_cpu_quota(cpu_max: Path) -> int | None:
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, math.ceil(int(quota) / int(period)))


class _EnvReader:
    def __init__(self, env: Mapping[str, str]):
        self._env = env

    def _raw(self, name: str) -> str | None:
        value = self._env.get(name)
        return None if value is None or value.strip() == "" else value.strip()

    def text(self, name: str, default: str) -> str:
        return self._raw(name) or default

    def choice(self, name: str, default: str, allowed: tuple[str, ...], normalise=lambda v: v) -> str:
        raw = self._raw(name)
        if raw is None:
            return default
        value = normalise(raw)
        if value not in allowed:
            raise ConfigError(f"{name}={raw!r} is not allowed; allowed values: {', '.join(allowed)}")
        return value

    def integer(self, name: str, default: int, minimum: int, maximum: int | None = None) -> int:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not an integer; {_range_text(minimum, maximum)}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise ConfigError(f"{name}={raw!r} is out of range; {_range_text(minimum, maximum)}")
        return value

    def number(self, name: str, default: float, minimum: float, maximum: float) -> float:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a number; {_range_text(minimum, maximum)}") from None
        if not math.isfinite(value) or not minimum <= value <= maximum:
            raise ConfigError(f"{name}={raw!r} is out of range; {_range_text(minimum, maximum)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = self._env.get(name)
        if raw is None:
            return default
        word = raw.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        allowed = ", ".join(TRUE_WORDS + FALSE_WORDS[:-1])
        raise ConfigError(f"{name}={raw!r} is not a boolean; allowed values: {allowed}")


def _range_text(minimum: float, maximum: float | None) -> str:
    return f"allowed: >= {minimum:g}" if maximum is None else f"allowed: {minimum:g} to {maximum:g}"
