"""GPUs idle while an attempt lives (grpo_stack.supervise.gpuidle): read from Ray's node summary, the clock that
feeds the stall detector. The answer's shape is Ray 2.53.0's (dashboard/modules/node/node_head.py get_all_nodes,
reporter_models.py GpuUtilizationInfo); a real head's answer is read in tests/recipes/test_gpu_idle_source.py,
where it lists no GPU (this machine has none), so GPU entries here are written after Ray's model."""

from __future__ import annotations

from grpo_stack.job.spec import Spec
from grpo_stack.job.supervised import watching
from grpo_stack.supervise.gpuidle import IdleClock, utilisations


def gpu(index: int, utilisation: int | None) -> dict:
    return {"index": index, "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{index}", "utilizationGpu": utilisation,
            "memoryUsed": 70000, "memoryTotal": 81559, "processesPids": []}


def summary(*nodes: dict) -> dict:
    return {"result": True, "msg": "Node summary fetched.", "data": {"summary": list(nodes),
                                                                      "nodeLogicalResources": {}}}


def node(gpus: list[dict], state: str = "ALIVE") -> dict:
    return {"raylet": {"state": state, "nodeId": "n"}, "gpus": gpus, "hostname": "worker"}


def test_every_gpu_of_every_alive_node_counts_and_a_dead_node_does_not():
    payload = summary(node([gpu(0, 97), gpu(1, 0)]), node([gpu(0, 3)]), node([gpu(0, 100)], state="DEAD"))
    assert utilisations(payload) == [97, 0, 3]


def test_no_gpu_reported_is_no_reading():
    assert utilisations(summary(node([]))) is None  # the head, or a CPU cluster
    assert utilisations(summary(node([gpu(0, None)]))) is None  # NVML gave no utilisation
    assert utilisations({"result": False, "msg": "error"}) is None


def test_the_clock_runs_while_every_gpu_is_idle_and_restarts_when_one_works():
    readings = iter([[0, 2], [1, 1], [50, 0], [0, 0], [0, 3], None, [0, 0]])
    now = iter([0.0, 60.0, 120.0, 180.0, 300.0, 360.0, 420.0])
    clock = IdleClock(lambda: next(readings), below_percent=10, clock=lambda: next(now))
    assert [clock() for _ in range(7)] == [0.0, 60.0, 0.0, 0.0, 120.0, None, 0.0]


def test_the_values_set_the_gpu_signal():
    def policy(stall: dict):
        return watching(Spec({"job": {"supervision": {"stall": stall}}, "cluster": {}, "storage": {}})).policy

    p = policy({"gpuIdleMinutes": 15, "gpuIdlePercent": 5})
    assert (p.gpu_idle_s, p.gpu_idle_percent) == (900.0, 5.0)
    assert policy({}).gpu_idle_s is None
