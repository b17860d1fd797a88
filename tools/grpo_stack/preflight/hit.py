"""A preflight check's raw report, in the lint's shape."""

from __future__ import annotations

from dataclasses import dataclass

from ..lint.finding import Severity


@dataclass(frozen=True)
class ClusterHit:
    code: str
    key_path: str  # a values key ("" = the values file as a whole)
    message: str
    severity: Severity = Severity.ERROR
    remediation: str = ""
