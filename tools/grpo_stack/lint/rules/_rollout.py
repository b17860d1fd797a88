"""A Deployment's rolling-update fenceposts as the Deployment controller resolves them (not a rule: no CODE)."""

from __future__ import annotations

import math
import re
from typing import Any

from ._quantity import whole


def scaled(value: Any, replicas: int, round_up: bool) -> int | None:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, `N%` of replicas rounded up (maxSurge) or down
    (maxUnavailable); None for anything else (the object schema reports it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"(\d+)%", str(value).strip())
    if not m:
        return None
    exact = int(m.group(1)) * replicas / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def rolling_update(deployment: dict[str, Any]) -> dict[str, Any] | None:
    """The rollingUpdate parameters with the API server's defaults (25 % / 25 %), or None for Recreate."""
    spec = deployment.get("spec") if isinstance(deployment.get("spec"), dict) else {}
    strategy = spec.get("strategy") if isinstance(spec.get("strategy"), dict) else {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    params = strategy.get("rollingUpdate") if isinstance(strategy.get("rollingUpdate"), dict) else {}
    return {"maxSurge": params.get("maxSurge", "25%"), "maxUnavailable": params.get("maxUnavailable", "25%")}


def replicas(deployment: dict[str, Any]) -> int:
    spec = deployment.get("spec") if isinstance(deployment.get("spec"), dict) else {}
    return whole(spec.get("replicas"), 1)
