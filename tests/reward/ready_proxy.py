"""A small HTTP proxy that sends each request to one Ready replica, as a Service's endpoints do.

It probes every replica's /ready on a fixed period (the kubelet's readiness probe, faster) and routes new requests
round-robin among the replicas whose last probe passed, so a replica leaves the rotation only once it reports
unready. A replica is also left out from the moment the test marks it terminating (the EndpointSlice controller
drops a pod as soon as its deletion starts). Requests it has forwarded run to the end; a replica that refuses the
connection or fails the request is the client's failure, since kube-proxy does not retry either.
"""

from __future__ import annotations

import asyncio
import itertools

import aiohttp
from aiohttp import web

# Slower than the replicas answer, so requests still reach a replica after it turns unready (the draining state).
PROBE_PERIOD_S = 2.0
PROBE_TIMEOUT_S = 2.0


class ReadyProxy:
    def __init__(self, backends: list[str]):
        self.backends = backends
        self.ready: dict[str, bool] = dict.fromkeys(backends, False)
        self.terminating: set[str] = set()
        self.routed: dict[str, int] = dict.fromkeys(backends, 0)
        self._turn = itertools.count()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._prober: asyncio.Task | None = None
        self.url = ""

    async def __aenter__(self) -> ReadyProxy:
        # No pooling of connections to the replicas: each request is a new connection, routed on its own.
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True),
                                              timeout=aiohttp.ClientTimeout(total=600))
        app = web.Application()
        app.router.add_post("/score", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        self._prober = asyncio.create_task(self._probe_forever())
        return self

    async def __aexit__(self, *exc) -> None:
        self._prober.cancel()
        await asyncio.gather(self._prober, return_exceptions=True)
        await self._runner.cleanup()
        await self._session.close()

    def routable(self) -> list[str]:
        return [b for b in self.backends if self.ready[b] and b not in self.terminating]

    async def wait_routable(self, count: int, timeout_s: float = 60) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.routable()) < count:
            assert loop.time() < deadline, f"replicas never became ready: {self.ready}"
            await asyncio.sleep(0.1)

    async def _probe_forever(self) -> None:
        while True:
            results = await asyncio.gather(*(self._probe(b) for b in self.backends))
            self.ready = dict(zip(self.backends, results, strict=True))
            await asyncio.sleep(PROBE_PERIOD_S)

    async def _probe(self, backend: str) -> bool:
        try:
            async with self._session.get(backend + "/ready", timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)) \
                    as reply:
                return reply.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def _forward(self, request: web.Request) -> web.Response:
        choices = self.routable()
        if not choices:
            return web.Response(status=503, text="no ready replica")
        backend = choices[next(self._turn) % len(choices)]
        self.routed[backend] += 1
        body = await request.read()
        try:
            async with self._session.post(backend + "/score", data=body,
                                          headers={"content-type": "application/json"}) as reply:
                return web.Response(status=reply.status, body=await reply.read(),
                                    content_type="application/json")
        except aiohttp.ClientError as error:
            return web.Response(status=502, text=f"{backend}: {type(error).__name__}: {error}")
