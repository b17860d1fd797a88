"""The session-wide `control_plane` pytest fixture (tests/conftest.py imports it)."""

from __future__ import annotations

import atexit
import os

import pytest


@pytest.fixture(scope="session")
def control_plane(kubectl_bin, tmp_path_factory):
    """A started ControlPlane (grpo_stack/localcluster/cluster.py): `.kubeconfig`, `.server`, `.kubectl(*args)`,
    `.create_nodes(instance_type, count)`, `.env()` for helm. Skips when `make cluster-tools` has not been run,
    except under CI=true, where this tier never skips. Stopped when the session ends, also on failure."""
    from grpo_stack.localcluster import binaries
    from grpo_stack.localcluster.cluster import ControlPlane

    try:
        ready = binaries.verified()
        where = binaries.tools_dir()
    except binaries.BuildError as exc:
        ready, where = False, f"({exc})"
    if not ready:
        reason = f"the control-plane binaries are not built at {where}: run `make cluster-tools`"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    cp = ControlPlane(binaries.tools_dir(), kubectl_bin, tmp_path_factory.mktemp("control-plane"))
    atexit.register(cp.stop)  # also when the session is interrupted between fixture set-up and tear-down
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()
