"""Fixtures of the control-plane tier: a distractor node pool and per-test namespaces."""

from __future__ import annotations

import re

import pytest

# Nodes of types no shipped values file selects: a pod that lands on one of them was placed by something other
# than the chart's instance-type selector. One GPU type (tainted like every GPU node) and two CPU types.
DISTRACTORS = ("p5.48xlarge", "g6e.12xlarge", "m5.large", "c6i.8xlarge")


@pytest.fixture(scope="session")
def node_pool(control_plane):
    for instance_type in DISTRACTORS:
        control_plane.ensure_nodes(instance_type, 1)
    return control_plane


def namespace_for(*parts: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", "-".join(parts).lower())[:63].strip("-")
