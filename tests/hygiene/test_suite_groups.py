"""`make test` runs two test processes; tests/conftest.py keeps the tests of one control plane, one Ray head or one
wheel build in one process (SHARED_BY_PATH). A test of such a resource outside those paths would start a second
one beside the first: two control planes on two cores, two Ray heads whose verl runs starve each other."""

from __future__ import annotations

from tests.conftest import SHARED_BY_PATH, scheduling_unit

RESOURCE_FIXTURES = {"control_plane": "control-plane", "ray_head": "ray"}


def test_every_test_of_a_shared_resource_runs_in_its_group(request):
    """Over the tests this session collected (the whole suite under `make test`)."""
    stray = [f"{item.nodeid} uses {name}" for item in request.session.items
             for name, group in RESOURCE_FIXTURES.items()
             if name in getattr(item, "fixturenames", ()) and scheduling_unit(item.nodeid) != group]
    assert not stray, stray


def test_groups_by_path():
    assert scheduling_unit("tests/cluster/test_preflight.py::test_x[a]") == "control-plane"
    assert scheduling_unit("tests/loop/test_loop.py::test_grpo_steps_learn") == "ray"
    assert scheduling_unit("tests/lint/test_engine.py::test_y") == "tests/lint/test_engine.py::test_y"
    assert set(SHARED_BY_PATH.values()) == {"control-plane", "ray", "wheel-build"}
