"""The gate's probe, a Ray job the in-pod submit runs before training on the cluster the run received:

    python3 probe.py --nodes N --gpus-per-node G [--dcgm-level L] [--max-mib M]

One placement-group bundle per node (STRICT_SPREAD), holding every GPU of it, as the training will: the Ray workers
own the node's GPUs and EFA devices, so the probe runs inside them, with the image's own torch, NCCL and
aws-ofi-nccl plugin and the pod's environment, the stack the training's collectives use. On each node it runs
`dcgmi diag -r L -j` (DCGM from the image, or a host engine named by DCGM_HOST_ENGINE) and an all-reduce over that
node's GPUs (where it has more than one); then one all-reduce over every GPU of every node. The all-reduces are
torch.distributed's, timed as nccl-tests times all_reduce_perf and printed in its table (busbw = algbw x 2(n-1)/n,
nccl-tests doc/PERFORMANCE.md), with NCCL_DEBUG=INFO's `Using network` lines, so grpo_stack.fabricgate.nccl reads
them as it reads nccl-tests' own output. The report is one JSON line on stdout, prefixed REPORT_PREFIX.

The module stands alone (the standard library, ray and torch): the submit ships this one file as the Ray job's
working_dir, so it runs on whichever node Ray places the driver and, as __main__, its functions reach the workers
by value; this package is installed on neither.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

REPORT_PREFIX = "grpo-fabric-gate-report: "  # then one JSON object: {"dcgm": {host: text}, "per_node": ..., "across"}

HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
          "   busbw #wrong")


def _host() -> str:
    return os.environ.get("NODE_NAME") or socket.gethostname()


def run_dcgm(level: int, timeout_s: float) -> str:
    """`dcgmi diag -r LEVEL -j`'s output, or a report that holds no result (the verdict then names why)."""
    dcgmi = shutil.which("dcgmi")
    if dcgmi is None:
        return "dcgmi: not found in the image (install DCGM, or set global.job.fabricGate.dcgmLevel: 0)"
    argv = [dcgmi, "diag", "-r", str(level), "-j"]
    if os.environ.get("DCGM_HOST_ENGINE"):
        argv += ["--host", os.environ["DCGM_HOST_ENGINE"]]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"dcgmi diag -r {level}: no answer in {timeout_s:.0f} s"
    return done.stdout if done.stdout.strip() else f"dcgmi diag -r {level}: exit {done.returncode}: {done.stderr}"


def all_reduce_table(rank: int, world: int, master: str, port: int, backend: str, max_bytes: int, iters: int,
                     log_file: str) -> str:
    """One rank of an all-reduce sweep from 1 MiB to max_bytes (x4 steps): rank 0 returns nccl-tests' table, every
    rank its NCCL INFO lines (NCCL_DEBUG_FILE)."""
    import torch
    import torch.distributed as dist

    device = "cuda" if backend == "nccl" else "cpu"
    if device == "cuda":
        torch.cuda.set_device(0)  # Ray gives each rank one GPU, visible as device 0
    dist.init_process_group(backend, init_method=f"tcp://{master}:{port}", rank=rank, world_size=world)
    lines = []
    size = 1 << 20
    while size <= max_bytes:
        count = size // 4
        buf = torch.ones(count, dtype=torch.float32, device=device)
        for _ in range(2):  # warm-up, as all_reduce_perf's warmup iters
            dist.all_reduce(buf)
        buf.fill_(1.0)
        if device == "cuda":
            torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / iters
        buf.fill_(1.0)
        dist.all_reduce(buf)
        wrong = int((buf != float(world)).sum().item())
        algbw = size / seconds / 1e9
        busbw = algbw * 2 * (world - 1) / world
        lines.append(f"{size:>12} {count:>13} {'float':>9} {'sum':>7} {-1:>7} {seconds * 1e6:>8.1f} {algbw:>7.2f} "
                     f"{busbw:>7.2f} {wrong:>6} {seconds * 1e6:>8.1f} {algbw:>7.2f} {busbw:>7.2f} {wrong:>6}")
        size *= 4
    dist.destroy_process_group()
    info = ""
    if os.path.exists(log_file):
        with open(log_file, encoding="utf-8", errors="replace") as fh:
            info = "".join(line for line in fh if "NCCL INFO Using network" in line or "NCCL WARN" in line)
    table = "\n".join([f"#  Rank {rank:>2} Group  0 Pid {os.getpid():>6} on {_host()} device  0", HEADER, *lines])
    return info + (table if rank == 0 else f"#  Rank {rank:>2} Group  0 Pid {os.getpid():>6} on {_host()} device  0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _node_ip() -> str:
    import ray

    return ray.util.get_node_ip_address()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m grpo_stack.fabricgate.probe", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--gpus-per-node", type=int, required=True)
    p.add_argument("--dcgm-level", type=int, default=1, choices=[0, 1, 2, 3], help="0: no DCGM diagnostic")
    p.add_argument("--max-mib", type=int, default=2048, help="the largest all-reduce message")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--timeout", type=float, default=900, help="seconds for the whole probe")
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"],
                   help="gloo: CPU processes in place of GPUs (the test suite's; proves the orchestration only)")
    opts = p.parse_args(argv)

    import ray
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    ray.init(address=os.environ.get("RAY_ADDRESS", "auto"))
    gpu = opts.backend == "nccl"
    unit = {"GPU": 1, "CPU": 0} if gpu else {"CPU": 1}
    bundle = {k: v * opts.gpus_per_node for k, v in unit.items() if v}
    pg = placement_group([bundle] * opts.nodes, strategy="STRICT_SPREAD" if opts.nodes > 1 else "PACK")
    if not pg.wait(timeout_seconds=opts.timeout):
        print(f"probe: the cluster did not give {opts.nodes} node(s) with {bundle} each within {opts.timeout:.0f} s "
              "(is something else running on it?)", file=sys.stderr)
        return 2
    resources = {"num_gpus": 1, "num_cpus": 0} if gpu else {"num_cpus": 1}
    env = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}

    def on(node: int, **extra):
        return PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=node, **extra)

    @ray.remote
    def node_task(level: int, timeout_s: float) -> tuple[str, str]:
        return _host(), run_dcgm(level, timeout_s) if level else ""

    @ray.remote
    class Rank:
        def address(self) -> tuple[str, int]:
            """Where rank 0 of a group listens: its node's IP and a port free there."""
            return _node_ip(), _free_port()

        def run(self, *args) -> str:
            log = f"/tmp/grpo-fabric-gate-{os.getpid()}.log"
            os.environ.update({**env, "NCCL_DEBUG_FILE": log})
            return all_reduce_table(*args, log)

    deadline = time.monotonic() + opts.timeout
    report: dict = {"dcgm": {}, "per_node": {}, "across": None}
    for host, text in ray.get([node_task.options(scheduling_strategy=on(i), num_cpus=0).remote(
            opts.dcgm_level, opts.timeout) for i in range(opts.nodes)], timeout=opts.timeout):
        if opts.dcgm_level:
            report["dcgm"][host] = text
    ranks = [[Rank.options(scheduling_strategy=on(i), **resources).remote() for _ in range(opts.gpus_per_node)]
             for i in range(opts.nodes)]
    max_bytes = opts.max_mib << 20

    def sweep(group: list) -> str:
        master, port = ray.get(group[0].address.remote())
        left = max(1.0, deadline - time.monotonic())
        outs = ray.get([r.run.remote(i, len(group), master, port, opts.backend, max_bytes, opts.iters)
                        for i, r in enumerate(group)], timeout=left)
        return "\n".join(outs)

    for node_ranks in ranks if opts.gpus_per_node > 1 else []:  # one GPU reduces nothing (verdict.judge)
        text = sweep(node_ranks)
        host = next((line.split(" on ")[1].split()[0] for line in text.splitlines() if " on " in line), "?")
        report["per_node"][host] = text
    if opts.nodes > 1:
        report["across"] = sweep([r for node_ranks in ranks for r in node_ranks])
    print(REPORT_PREFIX + json.dumps(report), flush=True)  # judged by `python -m grpo_stack.fabricgate.verdict`
    return 0


if __name__ == "__main__":
    sys.exit(main())
