"""NCCL all-reduce bus bandwidth that public runs on AWS instance types reached, with the source of every row: the
GPU and fabric gate's reference (grpo_stack.fabricgate.floors). Every figure is a published nccl-tests
`all_reduce_perf` result (busbw, out-of-place, GB/s) at the message size given; none is derived. Where sources
disagree the lowest is kept. Types without a row have no published figure the gate could check against."""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1 << 30
ADT = "aws-samples/awsome-distributed-training@7217859f67bc693c52ff175ccc6082c41dbd7a1b"
DO_EKS = "aws-samples/aws-do-eks@f721602f7389b817a74fec8343862733bce638ed"


@dataclass(frozen=True)
class BusBandwidth:
    instance: str
    nodes: int  # nodes of the published run; 1: the GPUs of one node over NVLink, no network
    size_bytes: int  # the message size of the figure
    gbps: float
    source: str


ROWS = (
    BusBandwidth("p5.48xlarge", 1, 2 * GIB, 468.60,
                 f"{DO_EKS}:Container-Root/eks/deployment/nccl-test/README.md#L75-L88 (expected results, one node)"),
    BusBandwidth("p5.48xlarge", 2, 2 * GIB, 437.79,
                 f"{ADT}:micro-benchmarks/nccl-tests/README.md#L278 (EKS, two nodes; the README's Slurm table has "
                 "443.72 at L222, aws-do-eks 438.85)"),
    BusBandwidth("p4de.24xlarge", 2, 2 * GIB, 78.33, f"{ADT}:micro-benchmarks/nccl-tests/README.md#L187 (two nodes)"),
    BusBandwidth("p4d.24xlarge", 2, 4 * GIB, 43.81,
                 "aws-samples/aws-efa-eks@9d6557e1689b2dbb59c485d73fcf425833773077:README.md#L716 (two nodes, an "
                 "older NCCL and aws-ofi-nccl)"),
    BusBandwidth("p5en.48xlarge", 16, 16 * GIB, 369.86,
                 f"{ADT}:micro-benchmarks/nccl-tests/slurm/topology-aware-nccl-tests/README.md#L265 (the README's "
                 "runs use 16 nodes)"),
    BusBandwidth("p6-b200.48xlarge", 2, 8 * GIB, 523.8,
                 f"{DO_EKS}:Container-Root/eks/deployment/nccl-test/all-reduce.yaml-template#L12 (two nodes, "
                 "verified over EFA)"),
)


def published(instance: str, multi_node: bool) -> BusBandwidth | None:
    """The published figure for one node's GPUs (multi_node False) or for a run across nodes (True)."""
    for row in ROWS:
        if row.instance == instance and (row.nodes > 1) == multi_node:
            return row
    return None
