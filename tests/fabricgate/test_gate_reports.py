"""The GPU and fabric gate on real outputs published by others (tests/fabricgate/fixtures/SOURCES.json cites
each): nccl-tests all_reduce_perf logs from EKS, Slurm and AWS Batch runs on p4d/p4de/p5/g4dn, a socket fallback,
a CUDA failure, and DCGM diagnostics that pass and fail. These are the outputs the gate's rules were written on;
four more were set aside before any rule was written and are judged in test_held_out.py. Where the check stops:
the probe's own table on a GPU is one recorded on a single H200 (probe_h200_1gpu.txt); several GPUs, several nodes
and EFA are the prepared check's (docs/observability.md)."""

from __future__ import annotations

import dataclasses

import pytest
from grpo_stack.fabricgate import judge, parse_all_reduce, parse_dcgm
from grpo_stack.fabricgate.floors import floor_for

from tests.fabricgate.verdicts import FIXTURES, SOURCES, findings_for, verdict

TUNED = sorted(p for p in FIXTURES.iterdir() if p.name in SOURCES)


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.stem)
def test_verdict_is_the_one_the_source_reports(path):
    assert verdict(findings_for(path)) == SOURCES[path.name]["verdict_expected"], findings_for(path)


def test_a_healthy_efa_run_passes_and_its_network_is_read():
    run = parse_all_reduce((FIXTURES / "nccl_ofi_p4d_2node_eks_debug_info.txt").read_text())
    assert run.transport == "ofi" and run.hosts == ["nccl-tests-efa-16-worker-0", "nccl-tests-efa-16-worker-1"]
    assert run.peak_busbw == 43.81 and run.avg_busbw == 11.2432
    assert run.wrong == 0, "the old layout's `error` column is a rounding deviation (5e-07), not a failure"
    assert findings_for(FIXTURES / "nccl_ofi_p4d_2node_eks_debug_info.txt") == []


def test_socket_fallback_is_refused_naming_the_nodes():
    (finding,) = [f for f in findings_for(FIXTURES / "nccl_socket_g4dn_2node_eks.txt") if f.severity == "error"]
    assert "NCCL chose sockets, not EFA" in finding.message and finding.node == "test-nccl-worker-0"


def test_a_test_that_died_names_its_host():
    (finding,) = findings_for(FIXTURES / "nccl_fail_cuda_not_initialized_h100.txt")
    assert finding.severity == "error" and finding.node == "test"
    assert "Test CUDA failure common.cu:941 'system not yet initialized'" in finding.message


def test_bandwidth_under_the_floor_names_the_floor_and_its_source():
    """A healthy p4de run's bandwidth is far under what a p5 reaches: judged as a p5 run, it fails."""
    findings = findings_for(FIXTURES / "nccl_ofi_p4de_2node_slurm_table.txt", instance="p5.48xlarge")
    (finding,) = [f for f in findings if f.severity == "error"]
    assert "bus bandwidth 78.3 GB/s is under the floor 218.9 GB/s for p5.48xlarge" in finding.message
    assert "awsome-distributed-training" in finding.message


def test_no_published_figure_is_a_warning_never_an_error():
    findings = findings_for(FIXTURES / "nccl_ofi_g4dn_2node_eks_karpenter.txt", instance="g4dn.12xlarge")
    assert [f.severity for f in findings] == ["warning"]
    assert "no sourced figure for g4dn.12xlarge" in findings[0].message


def test_unknown_network_is_a_warning():
    findings = findings_for(FIXTURES / "nccl_ofi_p5_2node_slurm_table.txt")
    assert [(f.severity, "EFA is not confirmed" in f.message) for f in findings] == [("warning", True)]


def test_a_sweep_below_the_published_size_is_not_compared():
    run = parse_all_reduce((FIXTURES / "nccl_ofi_p5_2node_eks_excerpt.txt").read_text())
    short = type(run)(ranks=run.ranks, rows=[r for r in run.rows if r.size < 1 << 30], networks={"h": {"Socket"}})
    findings = judge({}, {}, short, "p5.48xlarge", None, floor_for("p5.48xlarge", True), efa=False)
    assert [f.severity for f in findings] == ["warning"] and "no message of 2048 MiB or more" in findings[0].message


def test_dcgm_failures_name_the_test_and_the_gpus():
    diag = parse_dcgm((FIXTURES / "dcgm_diag_r3_fail_gpu_memory_cuinit_h100.txt").read_text())
    assert [(r.name, r.status) for r in diag.failed] == [("GPU Memory", "Fail")]
    assert 0 in diag.gpus(diag.failed[0]) and "cuInit" in diag.failed[0].detail
    assert {r.status for r in diag.results} >= {"Pass", "Skip", "Fail"}
    row_remap = parse_dcgm((FIXTURES / "dcgm_diag_deployment_error_row_remap_fragment.txt").read_text())
    (failed,) = row_remap.failed
    assert failed.name == "Deployment" and "row remappings are pending" in failed.detail
    assert row_remap.gpus(failed) == [3]


def test_dcgm_json_reads_like_the_table():
    diag = parse_dcgm((FIXTURES / "dcgm_diag_nvvs_json_pass_8gpu.json").read_text())
    assert diag.results and not diag.failed
    table = parse_dcgm((FIXTURES / "dcgm_diag_r2_pass_p4de.txt").read_text())
    assert table.results and not table.failed and not table.warned


def test_a_report_without_results_is_an_error():
    (finding,) = judge({"node-b": parse_dcgm("dcgmi: not found in the image")}, {}, None, "p5.48xlarge", None,
                       None, efa=True)
    assert finding.severity == "error" and finding.node == "node-b" and "did not run" in finding.message


def test_the_probes_own_table_from_a_real_gpu_is_read_and_one_rank_is_not_judged():
    """The probe's sweep as it ran on one H200 (SOURCES.json): NCCL's network line, the rank's host, six sizes and
    no wrong element are read. One rank moves no data (busbw 0 at every size), so neither a floor nor a 'not
    checked' warning applies; a wrong element still would."""
    path = FIXTURES / "probe_h200_1gpu.txt"
    run = parse_all_reduce(path.read_text())
    assert run.ranks == {0: "vm"} and run.networks == {"vm": {"Socket"}}
    assert [r.size >> 20 for r in run.rows] == [1, 4, 16, 64, 256, 1024] and run.wrong == 0
    assert judge({}, {"vm": run}, None, "p5en.48xlarge", floor_for("p5en.48xlarge", False), None, efa=False) == []
    run.rows[0] = dataclasses.replace(run.rows[0], wrong=3)
    (finding,) = judge({}, {"vm": run}, None, "p5en.48xlarge", None, None, efa=False)
    assert finding.severity == "error" and "3 wrong elements" in finding.message


def test_the_verdict_command_judges_a_probe_report_from_stdin():
    """The GPU machine's prepared check pipes the probe's output into `python -m grpo_stack.fabricgate.verdict`:
    here a report built from two published runs (a healthy p4d across-node run; a socket fallback), judged as the
    command reads it, in a real process. Where the check stops: the probe itself does not run here."""
    import json
    import os
    import subprocess
    import sys

    from grpo_stack.fabricgate.probe import REPORT_PREFIX
    from grpo_stack.paths import REPO_ROOT

    env = {**os.environ, "PYTHONPATH": f"{REPO_ROOT / 'tools'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    def judged(fixture: str) -> subprocess.CompletedProcess:
        report = {"dcgm": {}, "per_node": {}, "across": (FIXTURES / fixture).read_text()}
        log = "ranks placed\n" + REPORT_PREFIX + json.dumps(report) + "\n"
        return subprocess.run([sys.executable, "-m", "grpo_stack.fabricgate.verdict", "p4d.24xlarge", "--efa"],
                              input=log, capture_output=True, text=True, env=env, timeout=60)

    healthy = judged("nccl_ofi_p4d_2node_eks_debug_info.txt")
    assert healthy.returncode == 0 and "error" not in healthy.stdout, healthy.stdout + healthy.stderr
    sockets = judged("nccl_socket_g4dn_2node_eks.txt")
    assert sockets.returncode == 1 and "NCCL chose sockets, not EFA" in sockets.stdout, sockets.stdout
