"""HTTP surface: /score, /score/batch, /health, /ready, /metrics. Every handler is async; nothing runs in a thread."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import ClientDisconnect

from reward_service import limits
from reward_service.config import Settings
from reward_service.limits import BadRequest, TooLarge
from reward_service.metrics import Metrics
from reward_service.service import RawSample, RewardService, ServiceFault

log = logging.getLogger("reward_service")


async def _body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge(f"the body is {declared} bytes; the limit is {max_bytes} (REWARD_MAX_BODY_BYTES)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge(f"the body is over {max_bytes} bytes (REWARD_MAX_BODY_BYTES)")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_object(request: Request, max_bytes: int) -> dict:
    # Parsed regardless of Content-Type, so `curl -d` works too, and errors never echo the (possibly huge) body.
    data = limits.loads(await _body(request, max_bytes))
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _raw_sample(data: Any) -> RawSample:
    if not isinstance(data, dict):
        raise BadRequest(f"each sample must be a JSON object, got {type(data).__name__}")
    return RawSample(data.get("prompt"), data.get("response"), data.get("label"), data.get("metadata"),
                     data.get("data_source"))


def create_app(settings: Settings, metrics: Metrics | None = None) -> FastAPI:
    service = RewardService(settings, metrics or Metrics())

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

    @app.exception_handler(ServiceFault)
    async def service_fault(_request: Request, fault: ServiceFault) -> JSONResponse:
        headers = {"Retry-After": "1"} if fault.http_status == 503 else None
        return JSONResponse({"status": fault.status, "detail": fault.detail}, fault.http_status, headers=headers)

    @app.exception_handler(BadRequest)
    async def bad_request(_request: Request, error: BadRequest) -> JSONResponse:
        return JSONResponse({"status": "bad_request", "detail": str(error)}, 400)

    @app.exception_handler(TooLarge)
    async def too_large(_request: Request, error: TooLarge) -> JSONResponse:
        return JSONResponse({"status": "too_large", "detail": str(error)}, 413, headers={"Connection": "close"})

    @app.exception_handler(ClientDisconnect)
    async def client_gone(_request: Request, _error: ClientDisconnect) -> Response:
        return Response(status_code=400)  # nobody reads it; answered so the server logs no traceback

    max_body = settings.max_body_bytes

    @app.post("/score")
    async def score(request: Request) -> JSONResponse:
        sample = _raw_sample(await _json_object(request, max_body))
        results = await service.score_many([sample])
        return JSONResponse(results[0])

    @app.post("/score/batch")
    async def score_batch(request: Request) -> JSONResponse:
        samples = (await _json_object(request, max_body)).get("samples")
        if not isinstance(samples, list):
            raise BadRequest('the body must be {"samples": [...]}, a list of sample objects')
        if len(samples) > settings.max_batch_size:
            return JSONResponse({"status": "too_large", "detail": f"{len(samples)} samples; the limit is "
                                 f"{settings.max_batch_size} (REWARD_MAX_BATCH_SIZE)"}, 413)
        results = await service.score_many([_raw_sample(sample) for sample in samples])
        return JSONResponse({"results": results})

    @app.get("/health")
    async def health() -> JSONResponse:
        # Liveness: the event loop answers, and the pool is not beyond repair. A busy or restarting pool is alive;
        # only a pool whose workers keep failing to start (MAX_START_FAILURES in a row) gets the pod restarted.
        if service.pool.broken_reason:
            return JSONResponse({"status": "broken", "detail": service.pool.broken_reason}, 503)
        return JSONResponse({"status": "ok", "workers_alive": service.pool.alive})

    @app.get("/ready")
    async def ready() -> JSONResponse:
        problems = await service.readiness.problems()
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

    return app
