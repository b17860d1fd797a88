"""What a rule reports, and the located finding the engine turns it into."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Hit:
    """A rule's raw report. `key_path` is a values key path (global.job.lengths.maxPrompt) or, with
    `obj`, a dotted path inside that rendered object (spec.template.spec.containers.0.image)."""

    key_path: str
    message: str
    remediation: str | None = None  # overrides the rule's generic fix when the numbers matter
    obj: object | None = None  # a RenderedObject when the cause is in a rendered manifest
    severity: Severity | None = None  # overrides the rule's default (e.g. a version-dependent warning)
    related: tuple[str, ...] = ()  # other values key paths involved (suppression on any of them applies)


@dataclass(frozen=True, order=True)
class Finding:
    file: str
    line: int
    column: int
    code: str
    name: str
    severity: Severity
    key_path: str
    message: str
    remediation: str

    def as_dict(self) -> dict:
        return {
            "code": self.code, "name": self.name, "severity": self.severity.value, "file": self.file,
            "line": self.line, "column": self.column, "key_path": self.key_path, "message": self.message,
            "remediation": self.remediation,
        }
