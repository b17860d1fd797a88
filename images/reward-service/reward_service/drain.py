"""Graceful termination: on SIGTERM stop taking new traffic (readiness 503) and finish every accepted request.

Kubernetes sends SIGTERM after the pod's preStop delay, by when the Service has stopped routing new connections
here; requests already accepted, and ones still arriving on open keep-alive connections, are scored to the end
(each has a deadline of REWARD_DEADLINE_S from its arrival), their replies say `Connection: close` so clients
reconnect through the Service to another replica, and the process exits once nothing has been in flight for
QUIET_S. uvicorn's own handling would close the listener at once and, after its graceful timeout, cancel the
queued requests with plain 500s: miles' reward client fails a rollout on any non-2xx and does not retry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("reward_service")

# Nothing in flight for this long after SIGTERM, and the drain is over: a request a client had already sent on an
# open connection has arrived by then.
QUIET_S = 1.0
# Beyond the longest accepted request (REWARD_DEADLINE_S): the reply itself and the pool's shutdown.
SLACK_S = 2.0


class Drain:
    """Counts the scoring requests in flight and decides when a draining process may exit."""

    def __init__(self, deadline_s: float, clock: Callable[[], float] = time.monotonic):
        self._deadline_s = deadline_s
        self._clock = clock
        self.open_requests = 0
        self.draining = False
        self._began = 0.0
        self._last_activity = 0.0

    def request_started(self) -> None:
        self.open_requests += 1
        self._last_activity = self._clock()

    def request_ended(self) -> None:
        self.open_requests -= 1
        self._last_activity = self._clock()

    def begin(self) -> None:
        if self.draining:
            return
        self.draining = True
        self._began = self._last_activity = self._clock()
        log.info("draining: readiness is now false; accepted requests are finished before exit",
                 extra={"in_flight": self.open_requests})

    def finished(self) -> bool:
        """True once a draining process may exit: nothing in flight for QUIET_S, or the last accepted request's
        deadline is past (it has been answered by then, or something is stuck and is cut off)."""
        if not self.draining:
            return False
        now = self._clock()
        if self.open_requests == 0 and now - self._last_activity >= QUIET_S:
            log.info("drained: every accepted request was answered", extra={"drain_s": round(now - self._began, 2)})
            return True
        if now - self._last_activity >= self._deadline_s + SLACK_S:
            log.error("drain deadline passed with requests still open", extra={"in_flight": self.open_requests})
            return True
        return False
