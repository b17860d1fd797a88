"""Machine output: {"findings": [...], "input_errors": [...]}."""

from __future__ import annotations

import json


def render(findings, errors, colour: bool = False) -> str:
    return json.dumps({
        "findings": [f.as_dict() for f in findings],
        "input_errors": [
            {"file": e.file, "line": e.line, "column": e.column, "key_path": e.key_path, "message": e.message}
            for e in errors
        ],
    }, indent=2) + "\n"
