"""Termination without lost requests: two real reward-service processes on loopback behind a proxy that routes only
to Ready replicas (tests/reward/ready_proxy.py), one of them terminated the way Kubernetes does it: deletion starts,
the chart's rendered preStop delay passes with the pod serving unchanged, then SIGTERM.

Where the check stops: the proxy stands in for the Service's endpoints and kube-proxy (it routes by readiness and
drops a replica as soon as it reports unready; it does not retry), and the kubelet's preStop sleep and SIGTERM are
done by the test with the durations the chart renders. The control-plane tier checks that the API server admits
those rendered fields (tests/cluster/test_release_lifecycle.py).
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import aiohttp
from conftest import base_env
from ready_proxy import ReadyProxy
from reward_harness import SERVICE_DIR, ServiceProcess, service_env

WORKERS = 2
SLOW = {"data_source": "test_math", "response": "\\boxed{4}", "label": "4", "metadata": {"inject_fault": "slow"}}
# Clients posting slow samples at once through the proxy: enough that each replica holds at least twice its pool's
# capacity (WORKERS samples scoring) queued behind the running ones.
CLIENTS = 10 * WORKERS


def _rendered_timing(render_values) -> dict[str, int]:
    rendered = render_values("qwen3-235b")
    deployment = next(o.obj for o in rendered.of_kind("Deployment")
                      if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == "reward-service")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {item["name"]: item["value"] for item in container["env"]}
    return {"preStop": container["lifecycle"]["preStop"]["sleep"]["seconds"],
            "grace": pod["terminationGracePeriodSeconds"], "deadline": int(env["REWARD_DEADLINE_S"])}


class Load:
    """CLIENTS clients posting slow samples through the proxy until told to stop; every reply is kept."""

    def __init__(self, url: str):
        self.url = url
        self.statuses: list[int] = []
        self.failures: list[str] = []
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task] = []

    async def __aenter__(self) -> Load:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300))
        self._tasks = [asyncio.create_task(self._client()) for _ in range(CLIENTS)]
        return self

    async def __aexit__(self, *exc) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)
        await self._session.close()

    async def _client(self) -> None:
        while not self._stop.is_set():
            try:
                async with self._session.post(self.url + "/score", json=SLOW) as reply:
                    body = await reply.text()
                    self.statuses.append(reply.status)
                    if reply.status != 200:
                        self.failures.append(f"{reply.status}: {body[:200]}")
            except aiohttp.ClientError as error:
                self.statuses.append(0)
                self.failures.append(f"{type(error).__name__}: {error}")


async def _queue_depth(session: aiohttp.ClientSession, replica: ServiceProcess) -> float:
    async with session.get(replica.url + "/metrics") as reply:
        text = await reply.text()
    for line in text.splitlines():
        if line.startswith("reward_queue_depth "):
            return float(line.split()[1])
    raise AssertionError("reward_queue_depth not exported")


async def _wait_exit(replica: ServiceProcess, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while replica.proc.poll() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return replica.proc.poll()


def test_rolling_termination_of_a_busy_replica_fails_no_request(render_values, tmp_path):
    """At SIGTERM the terminated replica holds at least twice its pool's capacity of 1 s samples queued; the proxy
    keeps sending it requests until its readiness turns false, a second SIGTERM arrives mid-drain, and every
    request — queued, running, or arriving during the drain — is answered 200. The replica exits 0 within the
    rendered grace period (less the preStop delay already spent)."""
    timing = _rendered_timing(render_values)
    env = base_env(REWARD_WORKERS=str(WORKERS), REWARD_TEST_FAULT_INJECTION="1",
                   REWARD_DEADLINE_S=str(timing["deadline"]))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with ServiceProcess(env, tmp_path / "a") as leaving, ServiceProcess(env, tmp_path / "b") as staying:

        async def scenario() -> dict:
            async with ReadyProxy([leaving.url, staying.url]) as proxy, \
                    aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as probe:
                await proxy.wait_routable(2)
                async with Load(proxy.url) as load:
                    # Deletion starts: the pod serves unchanged through its preStop delay, then gets SIGTERM.
                    await asyncio.sleep(timing["preStop"])
                    queued = await _queue_depth(probe, leaving)
                    routed_before = proxy.routed[leaving.url]
                    leaving.proc.send_signal(signal.SIGTERM)
                    await asyncio.sleep(1.0)
                    leaving.proc.send_signal(signal.SIGTERM)  # draining: a repeated SIGTERM changes nothing
                    exit_code = await _wait_exit(leaving, timing["grace"] - timing["preStop"])
                    await asyncio.sleep(2.0)  # traffic goes on, to the staying replica only
                return {"queued": queued, "exit": exit_code, "statuses": load.statuses, "failures": load.failures,
                        "routed_during_drain": proxy.routed[leaving.url] - routed_before}

        seen = asyncio.run(scenario())
        log = leaving.log_text()
    sent, failed = len(seen["statuses"]), len(seen["failures"])
    print(f"drain: {sent} requests sent, {failed} failed, {seen['queued']:.0f} queued at SIGTERM, "
          f"{seen['routed_during_drain']} routed to the leaving replica after SIGTERM")
    assert seen["queued"] >= 2 * WORKERS, f"only {seen['queued']} samples queued at SIGTERM"
    assert seen["routed_during_drain"] >= 1, "no request reached the replica while it drained (the proxy was quick)"
    assert seen["exit"] == 0, f"the terminated replica did not exit cleanly: {seen['exit']}\n{log[-3000:]}"
    assert failed == 0, f"{failed} of {sent} requests failed: {seen['failures'][:5]}"
    assert "drained: every accepted request was answered" in log


def test_idle_replica_exits_at_once_on_sigterm(tmp_path):
    """Idle: nothing to finish, so SIGTERM ends the process cleanly within a few seconds of its quiet period."""
    with ServiceProcess(base_env(), tmp_path) as server:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=30) == 0, server.log_tail()
        assert "drained" in server.log_text()


def test_sigterm_while_starting_exits_cleanly_without_serving(tmp_path):
    """Starting: a SIGTERM while the pool is still starting (no listener yet, readiness never true) lets the start
    finish, serves nothing and exits 0 with no worker left behind."""
    from reward_harness import descendants, forkserver_pids, free_port

    env = service_env({**base_env(), "PORT": str(free_port()), "METRICS_PORT": str(free_port())})
    log = (tmp_path / "service.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "reward_service"], cwd=SERVICE_DIR, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not forkserver_pids(proc.pid):  # the pool is starting: its forkserver is up, no worker ready yet
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "service.log").read_text()
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        children = descendants(proc.pid)
        assert proc.wait(timeout=90) == 0, (tmp_path / "service.log").read_text()[-3000:]
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in children if _alive(pid)], "a process of the service outlived it"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def _alive(pid: int) -> bool:
    from reward_harness import running

    return running(pid)
