"""global.job.fabricGate in the in-pod submit, against the recipe tier's REAL local Ray head, through the kubectl
shim and run-on-cluster.sh: the probe runs as a Ray job before anything else is submitted, and a gate that fails
refuses the run with the failure named. This head has logical GPUs and no torch, so the probe's ranks cannot start:
the gate's "no report" failure, the one a broken image gives. The probe's success path runs on the loop tier's head
(tests/loop/test_fabric_gate.py); its verdicts on real outputs in tests/fabricgate."""

from __future__ import annotations

from tests.recipes.test_run_on_cluster import cluster_state, job_ids, run_recipe


def test_a_failed_gate_refuses_the_run_before_training(tmp_path, ray_head):
    address, env = ray_head
    state, spec = cluster_state("qwen3-8b.yaml", job={"fabricGate": {"dcgmLevel": 0, "maxMiB": 4,
                                                                      "timeoutSeconds": 120}})
    before = job_ids(address)
    proc, _ = run_recipe(tmp_path, state, spec, env={**env, "RAY_ADDRESS": address})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "submit: fabric gate: Ray job id grpo-fabric-gate-" in proc.stdout
    assert "submit: fabric gate: error: all: the probe printed no report" in proc.stderr
    assert "the GPU and fabric gate failed on all" in proc.stderr and "nothing submitted" in proc.stderr
    new = job_ids(address) - before
    assert len(new) == 1 and next(iter(new)).startswith("grpo-fabric-gate-"), new
