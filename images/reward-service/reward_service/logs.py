"""JSON-lines logging for the service and for uvicorn."""

from __future__ import annotations

import json
import logging
import sys
import time

# Attributes every LogRecord has; anything else on a record came from `extra=` and goes into the JSON line.
_STANDARD_ATTRS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "taskName", "color_message",
}


class RateLimit(logging.Filter):
    """Server-library lines (uvicorn, asyncio): at most `burst` per (logger, message template) per `window_s`;
    the next line let through after a quiet spell carries the count it stood for. Under descriptor exhaustion
    the accept loop reports the same error thousands of times a second (measured: 516 k lines, 262 MB in 20 s);
    this keeps it to a few lines."""

    def __init__(self, burst: int = 5, window_s: float = 10.0, max_keys: int = 1024, clock=time.monotonic):
        super().__init__()
        self._burst = burst
        self._window_s = window_s
        self._max_keys = max_keys
        self._clock = clock
        self._seen: dict[tuple[str, str], list] = {}  # key -> [window start, lines in window, suppressed]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "reward_service":
            return True  # one line per faulty sample, bounded by the scoring rate; never dropped
        key = (record.name, str(record.msg)[:200])
        now = self._clock()
        entry = self._seen.get(key)
        if entry is None or now - entry[0] >= self._window_s:
            if entry is None and len(self._seen) >= self._max_keys:
                self._seen.clear()  # bounded memory; at worst a few extra lines
            suppressed = entry[2] if entry else 0
            self._seen[key] = [now, 1, 0]
            if suppressed:
                record.suppressed_since_last = suppressed
            return True
        if entry[1] < self._burst:
            entry[1] += 1
            return True
        entry[2] += 1
        return False


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update({key: value for key, value in vars(record).items() if key not in _STANDARD_ATTRS})
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RateLimit())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
