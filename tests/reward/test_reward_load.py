"""Load: 10,000 requests at slime's 64 connections with 1 % pathological inputs; every one answered."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import aiohttp
import httpx
from reward_harness import metric_value
from test_reward_faults import HUGE_RESPONSE, NESTED_BRACES

REQUESTS = 10_000
CONCURRENCY = 64  # slime's TCPConnector(limit=64)
PATHOLOGICAL_EVERY = 100
CLIENT_TIMEOUT_S = 120  # slime's ClientTimeout(total=120)
PATHOLOGICAL = ["\\boxed{9^{9^{9^{9}}}}", "\\boxed{2^{10^{10}}}", NESTED_BRACES, HUGE_RESPONSE]
PATHOLOGICAL_STATUSES = {"screened", "timeout", "hard_timeout", "ok"}


def _workload() -> list[tuple[dict, set[str]]]:
    rng = random.Random(5)
    work = []
    for index in range(REQUESTS):
        if index % PATHOLOGICAL_EVERY == PATHOLOGICAL_EVERY - 1:
            response = PATHOLOGICAL[(index // PATHOLOGICAL_EVERY) % len(PATHOLOGICAL)]
            work.append(({"response": response, "label": 1}, PATHOLOGICAL_STATUSES))
            continue
        a, b = rng.randint(1, 999), rng.randint(2, 99)
        if index % 3 == 0:
            work.append(({"response": f"\\boxed{{\\frac{{{2 * a}}}{{{2 * b}}}}}", "label": f"\\frac{{{a}}}{{{b}}}"},
                         {"ok"}))
        elif index % 3 == 1:
            work.append(({"response": f"Thus the answer is \\boxed{{{a}}}.", "label": a}, {"ok"}))
        else:
            work.append(({"response": f"\\boxed{{{a + 1}}}", "label": a}, {"wrong"}))
    return work


async def _run(url: str, work: list[tuple[dict, set[str]]]) -> list:
    """The client slime uses: one aiohttp session, 64 connections, 120 s total timeout per request."""
    outcomes: list = [None] * len(work)
    next_index = iter(range(len(work)))
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    timeout = aiohttp.ClientTimeout(total=CLIENT_TIMEOUT_S)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        async def connection() -> None:
            for index in next_index:
                try:
                    sample = {"data_source": "test_math", **work[index][0]}
                    async with session.post(url + "/score", json=sample) as reply:
                        outcomes[index] = (reply.status, (await reply.json()).get("status"))
                except (aiohttp.ClientError, TimeoutError) as error:
                    outcomes[index] = ("transport", type(error).__name__)
        await asyncio.gather(*(connection() for _ in range(CONCURRENCY)))
    return outcomes


def test_ten_thousand_requests_with_pathological_inputs(service):
    """Under slime-like load with 1 % pathological responses, every request is answered with its expected status:
    zero lost, zero hung, no transport error (the predecessor stalled once its threads were all stuck)."""
    before = metric_value(service_metrics(service), "reward_score_latency_seconds_count")
    work = _workload()
    outcomes = asyncio.run(_run(service.url, work))
    wrong = [(index, outcome) for index, outcome in enumerate(outcomes)
             if outcome is None or outcome[0] != 200 or outcome[1] not in work[index][1]]
    assert not wrong, (len(wrong), wrong[:10], Counter(outcomes))
    after = metric_value(service_metrics(service), "reward_score_latency_seconds_count")
    assert after - before == REQUESTS
    assert metric_value(service_metrics(service), "reward_queue_depth") == 0
    assert metric_value(service_metrics(service), "reward_running") == 0
    service.wait_for_idle_workers(2)


def service_metrics(service) -> str:
    return httpx.get(service.url + "/metrics", timeout=10).text
