"""verl custom reward function that scores through the reward service.

Use it as verl's `custom_reward_function.path` (name `compute_score`) and set GRPO_REWARD_URL to the service's
full /score URL, e.g. http://grpo-reward-service.<namespace>.svc:8000/score.

Each sample carries its data_source, which the service routes to a scorer (math, code through SandboxFusion, or a
named custom scorer). A service fault raises RemoteRewardError instead of returning 0.0 — a scorer bug (500), a
sandbox outage (502 sandbox_unavailable), a data_source the routing table does not list (400 unknown_source) — so
training stops loudly instead of training on a flat zero reward. Transient unavailability (HTTP 503, connection
refused, timeouts) is retried first.
Standard library only, so it runs in any verl image.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

URL_ENV = "GRPO_REWARD_URL"
TIMEOUT_ENV = "GRPO_REWARD_TIMEOUT_S"    # per attempt; above the service's 60 s queue deadline
RETRIES_ENV = "GRPO_REWARD_RETRIES"      # attempts after the first, for 503s and connection errors
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_RETRIES = 5
MAX_BACKOFF_S = 10.0


class RemoteRewardError(RuntimeError):
    """The reward service could not score the sample; the reward is unknown, not zero."""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float:
    """verl's custom reward signature; returns the service's reward (1.0 or 0.0 for math)."""
    reply = score_remote({
        "prompt": None,
        "response": solution_str,
        "label": ground_truth,
        "metadata": {"data_source": data_source},
    })
    return float(reply["reward"])


def score_remote(payload: dict) -> dict:
    """POST one sample; return the service's JSON reply ({"reward", "status", ...})."""
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        raise RemoteRewardError(f"{URL_ENV} is not set; point it at the reward service's /score URL")
    timeout_s = _env_number(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)
    retries = int(_env_number(RETRIES_ENV, DEFAULT_RETRIES))
    body = json.dumps(payload).encode("utf-8")
    last_problem = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(2 ** (attempt - 1), MAX_BACKOFF_S))
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as error:
            problem = f"HTTP {error.code} from {url}: {_detail(error)}"
            if error.code != 503:
                raise RemoteRewardError(problem) from None  # deterministic: the same sample fails again
            last_problem = problem
            continue
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            last_problem = f"cannot reach {url}: {getattr(error, 'reason', error)}"
            continue
        if not isinstance(reply, dict) or not isinstance(reply.get("reward"), (int, float)):
            raise RemoteRewardError(f"unexpected reply from {url}: {str(reply)[:200]}")
        return reply
    raise RemoteRewardError(f"{last_problem} (gave up after {retries + 1} attempts)")


def _detail(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(error.read()).get("detail"))[:500]
    except (ValueError, AttributeError):
        return error.reason


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise RemoteRewardError(f"{name}={raw!r} is not a number") from None
