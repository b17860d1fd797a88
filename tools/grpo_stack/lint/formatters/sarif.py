"""SARIF 2.1.0, as GitHub code scanning accepts it: one run, the rule catalogue, one result per finding."""

from __future__ import annotations

import json

from ... import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rules():
    from ..rules import RULES, doc_section

    out = []
    for code, rule in RULES.items():
        out.append({
            "id": code,
            "name": rule.NAME,
            "shortDescription": {"text": rule.SUMMARY},
            "fullDescription": {"text": doc_section(rule, "What it does")},
            "help": {"text": doc_section(rule, "Fix"), "markdown": rule.DOC},
            "defaultConfiguration": {"level": "error" if rule.SEVERITY.value == "error" else "warning"},
        })
    return out


def render(findings, errors, colour: bool = False) -> str:
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "level": "error" if f.severity.value == "error" else "warning",
            "message": {"text": f"{f.message}" + (f" Fix: {f.remediation}" if f.remediation else "")},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": f.file},
                    "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
                },
                "logicalLocations": [{"fullyQualifiedName": f.key_path}] if f.key_path else [],
            }],
        })
    notifications = [{"level": "error", "message": {"text": str(e)}} for e in errors]
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "grpo-lint", "version": __version__,
                                "rules": _rules()}},
            "results": results,
            "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
        }],
    }
    return json.dumps(doc, indent=2) + "\n"
