"""Loopback ports to hand to a process that binds them later (a control-plane component, a Ray head).

A port `bind(("127.0.0.1", 0))` returns comes from the kernel's ephemeral range, which every outgoing connection
also draws its local port from: on a busy machine (Ray, vLLM and a control plane side by side) another socket can
take it between the choice and the component's own bind, which then fails with "address already in use". These
ports are chosen below the ephemeral range instead, where only an explicit bind can take them, and above Ray's
default worker ports (10002-19999), never twice in one process.
"""

from __future__ import annotations

import random
import socket
import threading

FIRST = 20_000  # above Ray's default worker ports
ATTEMPTS = 500
_given: set[int] = set()
_lock = threading.Lock()


def ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int:
    """The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read)."""
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A loopback port nothing holds now and no outgoing connection can be given (see the module's docstring);
    from the ephemeral range only where the kernel leaves no room below it."""
    low = ephemeral_low()
    with _lock:
        for _ in range(ATTEMPTS if low - FIRST >= 1000 else 0):
            port = random.randrange(FIRST, low)  # noqa: S311 (spreading choices, not a secret)
            if port not in _given and bindable(port):
                _given.add(port)
                return port
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]
