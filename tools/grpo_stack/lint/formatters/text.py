"""Human output: `file:line:col: CODE [severity] message (name)` plus the fix, coloured only on a TTY."""

from __future__ import annotations

from ..finding import Severity

COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m"}
RESET, DIM = "\033[0m", "\033[2m"


def render(findings, errors, colour: bool = False) -> str:
    lines = []
    for e in errors:
        lines.append(f"{e} [input error]")
    for f in findings:
        sev = f.severity.value
        if colour:
            sev = f"{COLOURS[f.severity]}{sev}{RESET}"
        key = f" {f.key_path}:" if f.key_path else ""
        lines.append(f"{f.file}:{f.line}:{f.column}: {f.code} [{sev}]{key} {f.message} ({f.name})")
        if f.remediation:
            lines.append(f"    {DIM if colour else ''}fix: {f.remediation}{RESET if colour else ''}")
    n_err = sum(f.severity is Severity.ERROR for f in findings)
    n_warn = len(findings) - n_err
    if findings or errors:
        lines.append(f"{n_err} error(s), {n_warn} warning(s), {len(errors)} input error(s)")
    return "\n".join(lines) + ("\n" if lines else "")
