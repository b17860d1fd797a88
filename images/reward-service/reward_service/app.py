"""HTTP surface: /score, /score/batch, /health, /ready, /metrics. Every handler is async; nothing runs in a thread.

POST /score and /score/batch are the hot path (one request per sample at trainer rates): they are plain ASGI
handlers that `RewardApp` calls directly, without FastAPI's routing, dependency solving and middleware stack (about
half the server's Python time per request when profiled). Their replies, status codes and headers are byte for byte
the ones FastAPI's JSONResponse and exception handlers gave. Everything else (probes, metrics, lifespan, 404/405)
goes to the FastAPI app.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import ClientDisconnect
from starlette.routing import Route

from reward_service import limits
from reward_service.config import Settings
from reward_service.drain import Drain
from reward_service.limits import BadRequest, TooLarge
from reward_service.metrics import Metrics
from reward_service.service import RawSample, RewardService, ServiceFault

log = logging.getLogger("reward_service")

# The same bytes Starlette's JSONResponse renders.
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
_INTERNAL_ERROR = b"Internal Server Error"
_CLOSE = ((b"connection", b"close"),)
# The ASGI scope key the server's protocol sets to the loop time the request's headers arrived (server.py).
ARRIVED = "reward_service.arrived"

Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


async def _drain(receive: Receive, limit: int) -> None:
    """Read and discard the rest of the request body, at most `limit` bytes (the body deadline bounds the time)."""
    drained = 0
    while drained <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        drained += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _body(scope: dict, receive: Receive, max_bytes: int) -> bytes:
    declared = _header(scope, b"content-length")
    if declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge(f"the body is {declared} bytes; the limit is {max_bytes} (REWARD_MAX_BODY_BYTES)", read=0)
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(f"the body is over {max_bytes} bytes (REWARD_MAX_BODY_BYTES)", read=size)
                chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _header(scope: dict, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""


async def _json_object(scope: dict, receive: Receive, max_bytes: int) -> dict:
    # Parsed regardless of Content-Type, so `curl -d` works too, and errors never echo the (possibly huge) body.
    data = limits.loads(await _body(scope, receive, max_bytes))
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _raw_sample(data: Any) -> RawSample:
    if not isinstance(data, dict):
        raise BadRequest(f"each sample must be a JSON object, got {type(data).__name__}")
    return RawSample(data.get("prompt"), data.get("response"), data.get("label"), data.get("metadata"),
                     data.get("data_source"))


async def _reply(send: Send, status: int, body: bytes, content_type: bytes | None = b"application/json",
                 headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    raw = [*headers, (b"content-length", str(len(body)).encode("latin-1"))]
    if content_type is not None:
        raw.append((b"content-type", content_type))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _fault_reply(error: Exception) -> tuple[int, bytes, tuple[tuple[bytes, bytes], ...]]:
    """Service faults are 5xx with a status and Retry-After when overloaded; a bad body is 400, a huge one 413."""
    if isinstance(error, ServiceFault):
        headers = ((b"retry-after", b"1"),) if error.http_status == 503 else ()
        return error.http_status, _JSON.encode({"status": error.status, "detail": error.detail}).encode(), headers
    if isinstance(error, BadRequest):
        return 400, _JSON.encode({"status": "bad_request", "detail": str(error)}).encode(), ()
    return 413, _JSON.encode({"status": "too_large", "detail": str(error)}).encode(), ((b"connection", b"close"),)


class RewardApp:
    """The ASGI application uvicorn serves: the scoring endpoints directly, everything else through FastAPI."""

    def __init__(self, service: RewardService, fastapi: FastAPI, settings: Settings, drain: Drain):
        self.service = service
        self.fastapi = fastapi
        self.drain = drain
        self._max_body = settings.max_body_bytes
        self._max_batch = settings.max_batch_size
        self.score_handlers: dict[str, Callable[[dict, Receive], Awaitable[Any]]] = {
            "/score": self.score, "/score/batch": self.score_batch}

    async def __call__(self, scope: dict, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            handler = self.score_handlers.get(scope["path"])
            if handler is not None:
                self.drain.request_started()
                try:
                    await self.serve(handler, scope, receive, send)
                finally:
                    self.drain.request_ended()
                return
        await self.fastapi(scope, receive, send)

    async def serve(self, handler: Callable[[dict, Receive], Awaitable[Any]], scope: dict, receive: Receive,
                    send: Send) -> None:
        try:
            status, content = await handler(scope, receive)
        except TooLarge as error:
            await self._refuse_too_large(error, scope, receive, send)
            return
        except (ServiceFault, BadRequest) as error:
            status, body, headers = _fault_reply(error)
            await _reply(send, status, body, headers=headers + self._closing())
            return
        except ClientDisconnect:
            await _reply(send, 400, b"", content_type=None)  # nobody reads it; answered so the server logs nothing
            return
        except Exception:
            # As Starlette's ServerErrorMiddleware: a plain 500, then the exception goes on to be logged.
            await _reply(send, 500, _INTERNAL_ERROR, content_type=b"text/plain; charset=utf-8")
            raise
        await _reply(send, status, _JSON.encode(content).encode(), headers=self._closing())

    def _closing(self) -> tuple[tuple[bytes, bytes], ...]:
        # While draining, each reply closes its connection, so the client's next request reconnects through the
        # Service to a replica that is staying.
        return _CLOSE if self.drain.draining else ()

    async def _scored(self, scope: dict, receive: Receive, samples: list[RawSample]) -> list[dict]:
        """Score with a watch on the connection: a client that goes away (an abandoned retry, a timed-out trainer)
        cancels its samples' work instead of leaving it to be scored for nobody. Called once the body is read,
        when uvicorn's receive() has nothing left to give but the disconnect."""
        task = asyncio.current_task()
        watching = True

        def client_left(watch: asyncio.Future) -> None:
            if watching and not watch.cancelled() and task is not None:
                task.cancel()

        watch = asyncio.ensure_future(receive())
        watch.add_done_callback(client_left)
        try:
            return await self.service.score_many(samples, scope.get(ARRIVED))
        except asyncio.CancelledError:
            if watch.done() and not watch.cancelled():
                task.uncancel()  # the cancel was ours, for the client; nothing else asked this task to stop
                raise ClientDisconnect() from None
            raise
        finally:
            watching = False
            watch.cancel()

    async def _refuse_too_large(self, error: TooLarge, scope: dict, receive: Receive, send: Send) -> None:
        """The 413 goes out as soon as the body is known to be too large; the rest of the body is then read and
        thrown away, up to REWARD_MAX_BODY_BYTES more, before the connection closes. Closing a socket with unread
        data resets the connection, and the client (aiohttp, requests and urllib all send the whole body first)
        would see a connection error and retry instead of the 413. A longer body is not read."""
        status, body, headers = _fault_reply(error)
        raw = [*headers, (b"content-length", str(len(body)).encode("latin-1")), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body, "more_body": True})
        declared = _header(scope, b"content-length")
        limit = 2 * self._max_body - error.read  # what is left to read of a body twice the limit
        # A client that waits for "100 Continue" sends no body after a 413; one declaring more than the bound is
        # not worth reading.
        if _header(scope, b"expect").lower() != "100-continue" and not (
                declared.isdigit() and int(declared) - error.read > limit):
            await _drain(receive, limit)
        await send({"type": "http.response.body", "body": b""})

    async def score(self, scope: dict, receive: Receive) -> tuple[int, Any]:
        sample = _raw_sample(await _json_object(scope, receive, self._max_body))
        results = await self._scored(scope, receive, [sample])
        return 200, results[0]

    async def score_batch(self, scope: dict, receive: Receive) -> tuple[int, Any]:
        samples = (await _json_object(scope, receive, self._max_body)).get("samples")
        if not isinstance(samples, list):
            raise BadRequest('the body must be {"samples": [...]}, a list of sample objects')
        if len(samples) > self._max_batch:
            return 413, {"status": "too_large", "detail": f"{len(samples)} samples; the limit is "
                         f"{self._max_batch} (REWARD_MAX_BATCH_SIZE)"}
        results = await self._scored(scope, receive, [_raw_sample(sample) for sample in samples])
        return 200, {"results": results}


def create_app(settings: Settings, metrics: Metrics | None = None, drain: Drain | None = None) -> RewardApp:
    service = RewardService(settings, metrics or Metrics())
    drain = drain or Drain(settings.deadline_s)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        await service.pool.start()
        log.info("reward service started", extra={"backend": settings.backend, "workers": settings.workers})
        yield
        await service.pool.close()
        if service.sandbox is not None:
            await service.sandbox.close()

    app = FastAPI(title="reward-service", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service
    state = {"ready": None}

    @app.get("/health")
    async def health() -> JSONResponse:
        # Liveness: the event loop answers, and the pool can score or is recovering. A busy or restarting pool is
        # alive; a pool whose workers keep failing to start, or that has had no live worker for
        # REWARD_BROKEN_AFTER_S, gets the pod restarted.
        problem = service.pool.unhealthy()
        if problem:
            return JSONResponse({"status": "broken", "detail": problem, "workers_alive": service.pool.alive}, 503)
        return JSONResponse({"status": "ok", "workers_alive": service.pool.alive})

    @app.get("/ready")
    async def ready() -> JSONResponse:
        # Draining answers at once, without a canary: the Service must stop routing here now.
        problems = ["draining: the process is terminating"] if drain.draining else await service.readiness.problems()
        is_ready = not problems
        service.metrics.ready.set(1 if is_ready else 0)
        if is_ready != state["ready"]:
            log.log(logging.INFO if is_ready else logging.WARNING, "readiness changed",
                    extra={"ready": is_ready, "problems": problems})
            state["ready"] = is_ready
        if is_ready:
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "unready", "problems": problems}, 503)

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    reward_app = RewardApp(service, app, settings, drain)
    for path, handler in reward_app.score_handlers.items():
        # RewardApp serves POST itself; the routes give other methods FastAPI's 405 with `Allow: POST`.
        app.router.routes.append(Route(path, functools.partial(reward_app.serve, handler), methods=["POST"]))
    return reward_app
