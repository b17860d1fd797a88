"""The values schema rejects the mistakes users make, at `helm install` (Helm's own validation through
helm_python) and in grpo_stack.values.schema_violations, each with a message that names the key."""

from __future__ import annotations

import subprocess
import sys

import pytest
from grpo_stack.paths import CHART_DIR
from grpo_stack.values import schema_violations

BASE = "qwen3-8b"
TOKEN = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"

# (id, overrides, text the message must contain)
REJECTED = [
    ("unknown-key", {"global.job.trainr": {"totalEpochs": 1}}, "trainr"),
    ("backend-typo", {"global.job.backend": "megatorn"}, "backend"),
    ("literal-hf-token", {"global.secrets.hfToken": TOKEN}, "hfToken"),
    ("hf-token-value-key", {"global.secrets.hfTokenValue": TOKEN}, "hfTokenValue"),
    ("nodes-not-integer", {"global.cluster.nodes": "two"}, "nodes"),
    ("image-tag-not-string", {"raycluster.image.tag": 0.91}, "tag"),
]


def merged(values: dict) -> dict:
    """Helm's coalesced values (what the schema validates), from a freshly loaded chart."""
    from grpo_stack.render import merged_values

    return merged_values(values)


def helm_render_error(values: dict) -> str | None:
    """Helm's message when it refuses `values`, or None when it renders (a fresh chart: no state carried)."""
    import helm_python

    helm_python.disable_logging()
    try:
        helm_python.Chart.load(str(CHART_DIR)).render(values, name="grpo", namespace="team-a", is_install=True)
    except helm_python.HelmError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(("case", "overrides", "names"), REJECTED, ids=[c[0] for c in REJECTED])
def test_helm_rejects(case, overrides, names, shipped_values, set_values):
    """review 000: a typo'd backend or an unread key silently ran the wrong job; a literal token leaked."""
    message = helm_render_error(set_values(shipped_values[BASE], overrides))
    assert message is not None, f"Helm rendered {overrides}"
    assert names in message, message


@pytest.mark.parametrize(("case", "overrides", "names"), REJECTED, ids=[c[0] for c in REJECTED])
def test_schema_violations_rejects(case, overrides, names, shipped_values, set_values):
    violations = schema_violations(merged(set_values(shipped_values[BASE], overrides)))
    assert violations, f"schema_violations accepted {overrides}"
    assert any(names in f"{v.key_path}: {v.message}" for v in violations), violations


def test_shipped_values_pass_the_schema(values_name, shipped_values):
    """The negative cases above are meaningful only if the shipped files are clean."""
    assert schema_violations(merged(shipped_values[values_name])) == []
    assert helm_render_error(shipped_values[values_name]) is None


def test_floating_tag_is_a_schema_valid_string(shipped_values, set_values):
    """The schema only types image.tag; pinning (no :latest) is checked on the rendered objects instead."""
    values = set_values(shipped_values[BASE], {"raycluster.image.tag": "latest"})
    assert schema_violations(merged(values)) == []


def test_generated_schemas_are_in_sync(repo_root):
    """values.schema.json is generated from the typed model; a hand edit or a stale file drifts (STYLE A6)."""
    proc = subprocess.run([sys.executable, "-m", "grpo_stack.schema.generate", "--check"], check=False, cwd=repo_root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
