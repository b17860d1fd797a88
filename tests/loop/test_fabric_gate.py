"""The GPU and fabric gate's probe on the loop tier's real Ray head, shipped as the in-pod submit ships it (its one
file as the Ray job's working_dir, grpo_stack.job.submit.submit_probe): its placement (one bundle per node holding
the node's "GPUs"), its rank actors, torch.distributed's all-reduce sweep timed and printed as nccl-tests prints
it, and its report as the submit judges it (grpo_stack.fabricgate.judge_report). Where the check stops: there is
no GPU here, so the ranks are CPU processes on the gloo backend (`--backend gloo`) and DCGM is not run
(`--dcgm-level 0`); NCCL, its network choice and dcgmi run only on a GPU machine (docs/observability.md, "GPU and
fabric gate"). The verdicts themselves are checked on published outputs in tests/fabricgate."""

from __future__ import annotations

import json

from grpo_stack.fabricgate import REPORT_PREFIX, judge_report, parse_all_reduce
from grpo_stack.job.rayjobs import Ray
from grpo_stack.job.submit import submit_probe

from .harness import HEAD_GPUS

CPU_RANKS = ["--backend", "gloo", "--dcgm-level", "0"]


def run_probe(world, *args: str) -> tuple[str, str]:
    ray = Ray(world.ray.address)
    job_id = submit_probe(ray, [*CPU_RANKS, *args])
    status, _ = ray.wait(job_id)
    return status, ray.logs(job_id)


def test_probe_sweeps_an_all_reduce_over_a_nodes_ranks_and_reports_it(world):
    status, log = run_probe(world, "--nodes", "1", "--gpus-per-node", str(HEAD_GPUS), "--max-mib", "16",
                            "--iters", "3")
    assert status == "SUCCEEDED", log[-3000:]
    (line,) = [x for x in log.splitlines() if x.startswith(REPORT_PREFIX)]
    report = json.loads(line[len(REPORT_PREFIX):])
    ((host, text),) = report["per_node"].items()
    run = parse_all_reduce(text)
    assert sorted(run.ranks) == list(range(HEAD_GPUS)) and run.hosts == [host]
    assert [r.size for r in run.rows] == [1 << 20, 4 << 20, 16 << 20]
    assert run.wrong == 0 and all(r.busbw_out > 0 for r in run.rows)
    assert report["across"] is None, "one node: no all-reduce across nodes"
    # judged as the submit judges it: no published figure for a CPU "instance": warnings, no error
    findings = judge_report(log, "m5.large", efa=False)
    assert findings and {f.severity for f in findings} == {"warning"}, findings


def test_probe_says_when_the_cluster_cannot_give_it_the_nodes(world):
    status, log = run_probe(world, "--nodes", "2", "--gpus-per-node", "1", "--timeout", "20")
    assert status == "FAILED" and "the cluster did not give 2 node(s)" in log, log[-3000:]
    (finding,) = judge_report(log, "p5.48xlarge", efa=True)
    assert finding.severity == "error" and "the probe printed no report" in finding.message
