"""SandboxFusion `/run_code` client: one request per test case, with infrastructure faults kept apart from verdicts.

The contract (SandboxFusion server, `RunCodeRequest`/`RunCodeResponse`): HTTP 200 with `status` Success (every
command finished with rc 0), Failed (a compile or run error, rc != 0, or a time limit: the program's fault) or
SandboxError (the sandbox's own fault). A 5xx, a refused connection, a timeout or SandboxError is retried with a
bound and then raised as SandboxFault: the reward is unknown, and verl's client would have scored it 0.0 (its `-1`
"api_error"). A 4xx means this client sent a request the server does not accept: raised at once (a bug, not load).
The server enforces no concurrency limit, so this client bounds it.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from reward_service.metrics import Metrics

RETRY_BACKOFF_S = (0.5, 1.0, 2.0, 4.0)
# Beyond compile + run time: the server's own overhead and queueing.
HTTP_MARGIN_S = 5.0
CONNECT_TIMEOUT_S = 5.0
PING_TIMEOUT_S = 2.0


class SandboxFault(Exception):
    """The sandbox could not run the code: a service fault, never a wrong answer."""


class SandboxClient:
    def __init__(self, url: str, concurrency: int, retries: int, run_timeout_s: float, memory_mb: int,
                 metrics: Metrics):
        self.url = url
        self._retries = retries
        self._run_timeout_s = run_timeout_s
        # Not sent: the pinned server (server-20250609) and SandboxFusion's client models (0.3.7) have no
        # memory_limit_MB; the server would drop it unread (tests/wires/test_sandbox_wire.py).
        self.memory_mb = memory_mb
        self._metrics = metrics
        self._slots = asyncio.Semaphore(concurrency)
        timeout = httpx.Timeout(2 * run_timeout_s + HTTP_MARGIN_S, connect=CONNECT_TIMEOUT_S)
        self._client = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=concurrency),
                                         trust_env=False)
        self.last_fault: str | None = None
        self.last_fault_at = 0.0

    async def close(self) -> None:
        await self._client.aclose()

    async def run(self, code: str, stdin: str | None) -> dict:
        """POST one program; return the RunCodeResponse of a Success or Failed run, or raise SandboxFault."""
        body = {"code": code, "language": "python", "stdin": stdin, "compile_timeout": self._run_timeout_s,
                "run_timeout": self._run_timeout_s, "files": {}, "fetch_files": []}
        problem = ""
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(RETRY_BACKOFF_S[min(attempt, len(RETRY_BACKOFF_S)) - 1])
            outcome, problem, reply = await self._attempt(body)
            self._metrics.sandbox_calls.labels(outcome).inc()
            if reply is not None:
                self.last_fault = None
                return reply
            if outcome == "rejected":
                break
        self.last_fault = problem
        self.last_fault_at = time.monotonic()
        raise SandboxFault(f"{problem} (after {attempt + 1} attempt{'s' if attempt else ''})")

    async def _attempt(self, body: dict) -> tuple[str, str, dict | None]:
        try:
            async with self._slots:
                reply = await self._client.post(self.url, json=body)
        except httpx.TimeoutException:
            return "timeout", f"the sandbox at {self.url} did not answer in time", None
        except httpx.TransportError as error:
            return "unreachable", f"cannot reach the sandbox at {self.url}: {error or type(error).__name__}", None
        if reply.status_code >= 500:
            return "http_5xx", f"the sandbox answered HTTP {reply.status_code}: {reply.text[:200]}", None
        if reply.status_code != 200:
            refusal = f"the sandbox refused the request with HTTP {reply.status_code}: {reply.text[:200]}"
            return "rejected", refusal, None
        try:
            data = reply.json()
        except ValueError:
            return "bad_reply", "the sandbox answered something that is not JSON", None
        status = data.get("status") if isinstance(data, dict) else None
        if status == "SandboxError":
            return "sandbox_error", f"the sandbox reported SandboxError: {str(data.get('message'))[:200]}", None
        if status not in ("Success", "Failed"):
            return "bad_reply", f"the sandbox answered an unknown status {str(status)[:50]!r}", None
        return status.lower(), "", data

    async def ping(self) -> str | None:
        """None when the sandbox answers /v1/ping, else why not (readiness re-checks a failed sandbox this way)."""
        ping_url = self.url.rsplit("/run_code", 1)[0] + "/v1/ping"
        try:
            reply = await self._client.get(ping_url, timeout=PING_TIMEOUT_S)
        except httpx.HTTPError as error:
            return f"cannot reach the sandbox at {ping_url}: {error or type(error).__name__}"
        if reply.status_code != 200:
            return f"the sandbox ping answered HTTP {reply.status_code}"
        self.last_fault = None
        return None
