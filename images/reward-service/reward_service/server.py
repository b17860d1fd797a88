"""The HTTP server: uvicorn on uvloop + httptools, with read deadlines, a connection cap and descriptor headroom.

uvicorn has a keep-alive timeout but no deadline for reading a request: a client that sends half a header (or half
a body) holds its connection and descriptor for ever, and 200 such clients starve the server. The protocol below
closes a connection whose headers are not complete `header_timeout_s` after it opened (or after the previous
response), or whose body is not complete `body_timeout_s` after its headers. uvicorn's `limit_concurrency` answers
503 at once beyond the cap, and the cap is clamped below the process's descriptor limit, so a flood is refused with
a status instead of exhausting descriptors. `GET /health` is exempt from the cap: liveness must report whether the
process works, and a flood of idle connections (which the read deadline clears) is no reason to restart the pod.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import signal

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from reward_service.app import ARRIVED
from reward_service.config import Settings
from reward_service.drain import Drain

log = logging.getLogger("reward_service")

# Descriptors kept free beyond the connection cap: the listeners, worker sockets, the sandbox client's
# connections, log and /proc files.
FD_HEADROOM = 64
FDS_PER_WORKER = 4
# When fewer descriptors than this are free, a new connection is answered 503 and closed at once. Its descriptor is
# freed right away, so accept() keeps working under pressure from elsewhere and every refusal carries a status;
# at zero free descriptors the event loop could only drop connections without a word.
FD_RESERVE = 8
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\n"
            b"content-length: 33\r\nconnection: close\r\n\r\nfile descriptors nearly exhausted")


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    header_timeout_s = 10.0
    body_timeout_s = 60.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(seconds, self._read_timed_out)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_timed_out(self) -> None:
        self._read_deadline = None
        if not self.transport.is_closing():
            cycle = self.cycle
            if cycle is None or cycle.response_complete or not cycle.response_started:
                # Nothing is being answered for this request (its headers or body never ended): say why, and drop
                # whatever the application might still send for it.
                if cycle is not None and not cycle.response_complete:
                    cycle.disconnected = True
                self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            self.transport.close()

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if _descriptors_tight(len(self.connections)):
            log.warning("connection refused: file descriptors nearly exhausted")
            transport.write(_REFUSAL)
            transport.close()
            return
        self._arm(self.header_timeout_s)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_deadline is None:  # a keep-alive connection starting its next request
            self._arm(self.header_timeout_s)

    def on_headers_complete(self) -> None:
        arrived = self.loop.time()  # the request's deadline counts from here, not from when a worker takes it
        if self.url.partition(b"?")[0] == b"/health" and self.parser.get_method() == b"GET":
            limit, self.limit_concurrency = self.limit_concurrency, None  # liveness is never refused by the cap
            try:
                super().on_headers_complete()
            finally:
                self.limit_concurrency = limit
        else:
            super().on_headers_complete()
        if self.cycle is not None:
            self.cycle.scope[ARRIVED] = arrived
        self._arm(self.body_timeout_s)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)


_baseline_fds = 0


def _descriptors_tight(connections: int) -> bool:
    """True when fewer than FD_RESERVE descriptors are free. Counts /proc/self/fd only when the limit is close to
    the estimate (the listing costs ~0.1 ms); with the usual limit of 10^5 or more it never runs."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft - (_baseline_fds + connections) > 4 * FD_RESERVE + FD_HEADROOM:
        return False
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except OSError:
        return False
    return soft - in_use < FD_RESERVE


def protocol_class(settings: Settings) -> type[GuardedHttpToolsProtocol]:
    global _baseline_fds
    # Before the pool starts: add what the workers and the sandbox client will hold.
    _baseline_fds = (len(os.listdir("/proc/self/fd")) + FDS_PER_WORKER * settings.workers
                     + settings.sandbox_concurrency)
    return type("RewardHttpProtocol", (GuardedHttpToolsProtocol,), {
        "header_timeout_s": settings.header_timeout_s, "body_timeout_s": settings.body_timeout_s})


def connection_cap(settings: Settings) -> int:
    """The configured cap, lowered to fit under the descriptor limit (raised to its hard maximum first)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    headroom = FD_HEADROOM + FDS_PER_WORKER * settings.workers + settings.sandbox_concurrency
    if soft == resource.RLIM_INFINITY:
        return settings.max_connections
    fitting = max(1, soft - headroom)
    if fitting < settings.max_connections:
        log.warning("connection cap lowered to fit the descriptor limit",
                    extra={"configured": settings.max_connections, "cap": fitting, "nofile": soft})
    return min(settings.max_connections, fitting)


class DrainingServer(uvicorn.Server):
    """uvicorn, but SIGTERM drains (reward_service.drain) instead of cutting queued requests off with 500s. The
    listener stays open while draining: a request that still arrives is accepted work and is scored. A second
    SIGINT (Ctrl-C twice) still exits at once; a repeated SIGTERM changes nothing."""

    def __init__(self, config: uvicorn.Config, drain: Drain):
        super().__init__(config)
        self.drain = drain

    def handle_exit(self, sig: int, frame) -> None:
        if self.drain.draining and sig == signal.SIGINT:
            self.should_exit = self.force_exit = True
            return
        self.drain.begin()

    async def on_tick(self, counter: int) -> bool:
        return await super().on_tick(counter) or self.drain.finished()


def serve(app, settings: Settings) -> None:
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        loop="uvloop",
        http=protocol_class(settings),
        log_config=None,
        access_log=settings.access_log,
        limit_concurrency=connection_cap(settings),
        timeout_keep_alive=5,
        timeout_graceful_shutdown=int(settings.hard_timeout_s) + 1,
    )
    server = DrainingServer(config, app.drain)
    server.run()
    if not server.started:
        raise SystemExit(3)  # start-up failed (e.g. no worker could start): uvicorn's own start-up failure code
