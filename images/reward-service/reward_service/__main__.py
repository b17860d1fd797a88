"""Entry point: `python -m reward_service`. Reads PORT, METRICS_PORT and the REWARD_* variables."""

from __future__ import annotations

import sys

from reward_service.config import ConfigError, Settings


def main() -> int:
    try:
        settings = Settings.from_env()
    except ConfigError as error:
        # One plain line, so `kubectl logs` of a CrashLoopBackOff pod says exactly what to fix.
        print(f"reward-service: configuration error: {error}", file=sys.stderr)
        return 2

    # Imported after the settings check, so a bad setting fails fast without loading the web stack.
    from prometheus_client import start_http_server

    from reward_service.app import create_app
    from reward_service.logs import configure_logging
    from reward_service.metrics import Metrics
    from reward_service.server import serve

    configure_logging(settings.log_level)
    metrics = Metrics()
    start_http_server(settings.metrics_port, addr=settings.host, registry=metrics.registry)
    serve(create_app(settings, metrics), settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
