"""The registry of dataset adapters, one module each. Adding a dataset: a module with ADAPTER, one line here."""

from __future__ import annotations

from . import aime, apps, codecontests, dapo, gsm8k, math_lighteval, taco
from .base import Adapter, Skip

REGISTRY: dict[str, Adapter] = {
    m.ADAPTER.name: m.ADAPTER for m in (gsm8k, math_lighteval, dapo, aime, apps, taco, codecontests)
}

__all__ = ["REGISTRY", "Adapter", "Skip"]
