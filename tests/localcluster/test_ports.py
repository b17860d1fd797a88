"""The ports handed to components that bind them later: outside the kernel's ephemeral range (which bind(0) and
every outgoing connection draw from), free when handed, and never handed twice in one process."""

from __future__ import annotations

import socket

from grpo_stack.localcluster import ports


def test_ports_lie_below_the_ephemeral_range_and_above_rays_worker_ports():
    low = ports.ephemeral_low()
    handed = [ports.free_port() for _ in range(50)]
    assert len(set(handed)) == 50
    assert all(ports.FIRST <= p < low for p in handed)
    for p in handed:
        assert ports.bindable(p)


def test_an_outgoing_connection_never_takes_a_handed_port():
    """What raced before: a client socket's local port comes from the ephemeral range, never from these."""
    port = ports.free_port()
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.connect(server.getsockname())
        assert client.getsockname()[1] >= ports.ephemeral_low() != port


def test_a_port_held_elsewhere_is_not_handed(monkeypatch):
    """The held port is drawn first; the draws after it are whatever ports follow (any of them may be held too on a
    busy machine, or handed already in this process: the search goes on past them)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        picks = iter([taken, *(p for p in range(1024, 65536) if p != taken)])
        monkeypatch.setattr(ports, "ephemeral_low", lambda: 65536)
        monkeypatch.setattr(ports, "FIRST", 1024)
        monkeypatch.setattr(ports.random, "randrange", lambda a, b: next(picks))
        assert ports.free_port() != taken


def test_no_room_below_the_range_falls_back_to_the_kernels_choice(monkeypatch):
    monkeypatch.setattr(ports, "ephemeral_low", lambda: ports.FIRST + 10)
    assert ports.bindable(ports.free_port())


def test_an_unreadable_range_is_linuxs_default(tmp_path):
    assert ports.ephemeral_low(str(tmp_path / "missing")) == 32768
    (tmp_path / "range").write_text("40000\t60999\n")
    assert ports.ephemeral_low(str(tmp_path / "range")) == 40000


def test_a_component_that_finds_its_port_taken_is_started_again_on_new_ports(monkeypatch, tmp_path):
    """ControlPlane.start: one more start, every port chosen again, when a component exits with `address already
    in use`; any other failure is raised at once. (The components themselves are the control-plane tier's.)"""
    from grpo_stack.localcluster.cluster import ControlPlane, ControlPlaneError

    cp = ControlPlane(tmp_path, tmp_path / "kubectl", tmp_path)
    first_api, calls = cp.api_port, []

    def start_once():
        calls.append(cp.api_port)
        if len(calls) == 1:
            cp.components.append(object())
            raise ControlPlaneError("kube-scheduler exited with 1:\nbind: address already in use")
        return cp

    monkeypatch.setattr(cp, "_start", start_once)
    assert cp.start() is cp
    assert calls[0] == first_api != calls[1] and cp.components == []

    other = ControlPlane(tmp_path, tmp_path / "kubectl", tmp_path)
    monkeypatch.setattr(other, "_start", lambda: (_ for _ in ()).throw(ControlPlaneError("etcd exited with 2")))
    try:
        other.start()
    except ControlPlaneError as exc:
        assert "etcd" in str(exc)
    else:
        raise AssertionError("a failure other than a taken port was retried")
