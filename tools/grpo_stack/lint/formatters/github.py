"""GitHub Actions workflow commands: ::error file=..,line=..,col=..,title=..::message."""

from __future__ import annotations


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


def render(findings, errors, colour: bool = False) -> str:
    lines = []
    for e in errors:
        loc = f"file={_prop(e.file)}" + (f",line={e.line}" if e.line else "")
        lines.append(f"::error {loc},title=grpo-lint input error::{_escape(e.message)}")
    for f in findings:
        level = "error" if f.severity.value == "error" else "warning"
        msg = f"{f.message}" + (f" — fix: {f.remediation}" if f.remediation else "")
        lines.append(f"::{level} file={_prop(f.file)},line={f.line},col={f.column},"
                     f"title={_prop(f'{f.code} {f.name}')}::{_escape(msg)}")
    return "\n".join(lines) + ("\n" if lines else "")
