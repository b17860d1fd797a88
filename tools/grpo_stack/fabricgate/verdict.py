"""The gate's verdict on one run's nodes: DCGM's diagnostics and an all-reduce on each node, one all-reduce across
all of them. An error refuses the submit and names the node; where a verdict rests on an assumption (no sourced
bandwidth for the instance type, no NCCL_DEBUG=INFO line naming the network) it is a warning that says so."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .dcgm import DcgmDiag, parse_dcgm
from .floors import Floor, floor_for
from .nccl import AllReduce, parse_all_reduce
from .probe import REPORT_PREFIX


@dataclass(frozen=True)
class GateFinding:
    severity: str  # error | warning
    node: str  # the node (host) it names; "all" for the all-node all-reduce
    message: str


def _dcgm(node: str, diag: DcgmDiag) -> list[GateFinding]:
    if not diag.results:
        return [GateFinding("error", node, "DCGM's report holds no test result: the diagnostic did not run")]
    out = [GateFinding("error", node, f"DCGM {r.name}: Fail {r.detail}".rstrip()) for r in diag.failed]
    out += [GateFinding("warning", node, f"DCGM {r.name}: Warn {r.detail}".rstrip()) for r in diag.warned]
    return out


def _completed(where: str, hosts: list[str], run: AllReduce) -> list[GateFinding]:
    """A test that stopped, or computed wrong sums: no bandwidth of it counts."""
    out = [GateFinding("error", host, f"{where}: {line}") for host, line in run.failures]
    if run.wrong:
        out.append(GateFinding("error", " ".join(hosts), f"{where}: {run.wrong} wrong elements (data corruption "
                               "on a GPU or link of these nodes)"))
    if not run.rows and not run.failures:
        out.append(GateFinding("error", " ".join(hosts), f"{where}: no result row: the all-reduce did not run"))
    return out


def _bandwidth(where: str, node: str, run: AllReduce, floor: Floor | None, instance: str,
               hint: str = "") -> list[GateFinding]:
    peak = run.peak_busbw if floor is None else run.peak_busbw_from(floor.min_size)
    if peak is None:
        if floor is not None and run.rows:
            return [GateFinding("warning", node, f"{where}: bus bandwidth not checked: no message of "
                                f"{floor.min_size >> 20} MiB or more was measured ({floor.why})")]
        return []
    if floor is None:
        return [GateFinding("warning", node, f"{where}: bus bandwidth {peak:.1f} GB/s not checked: the catalogue has "
                            f"no sourced figure for {instance}{hint}")]
    if peak < floor.min_gbps:
        return [GateFinding("error", node, f"{where}: bus bandwidth {peak:.1f} GB/s is under the floor "
                            f"{floor.min_gbps:.1f} GB/s for {instance} ({floor.why})")]
    return []


def judge(dcgm: dict[str, DcgmDiag], per_node: dict[str, AllReduce], across: AllReduce | None, instance: str,
          node_floor: Floor | None, fabric_floor: Floor | None, efa: bool) -> list[GateFinding]:
    """`dcgm` and `per_node`: each node's diagnostic and its all-reduce over its own GPUs (NVLink); `across`: the
    all-reduce over every GPU of every node (None: one node). `efa`: the run asks for EFA, so NCCL must use it."""
    out: list[GateFinding] = []
    for node in sorted(dcgm):
        out += _dcgm(node, dcgm[node])
    for node in sorted(per_node):
        run = per_node[node]
        done = _completed("all-reduce on the node", [node], run)
        # One rank reduces nothing: NCCL returns at once and nccl-tests' busbw factor 2(n-1)/n is 0 (seen on an
        # H200, tests/fabricgate/fixtures/probe_h200_1gpu.txt). A one-GPU node has no bandwidth to judge.
        if len(run.ranks) != 1:
            out += done or _bandwidth("all-reduce on the node", node, run, node_floor, instance)
        else:
            out += done
    if across is None:
        return out
    hosts = across.hosts or sorted(per_node) or ["all"]
    where = f"all-reduce across {len(hosts)} nodes" if hosts != ["all"] else "all-reduce across the nodes"
    done = _completed(where, hosts, across)
    out += done
    # Sockets where EFA was asked for: those nodes are named, and no bandwidth of the run is judged.
    on_sockets = across.hosts_on("socket") if efa else []
    out += [GateFinding("error", h, f"{where}: NCCL chose sockets, not EFA (no OFI network: the aws-ofi-nccl plugin "
                        "did not load or found no EFA device)") for h in on_sockets]
    if efa and not on_sockets and across.transport == "unknown":
        out.append(GateFinding("warning", "all", f"{where}: no NCCL_DEBUG=INFO line names the network NCCL chose, "
                               "so EFA is not confirmed"))
    if not done and not on_sockets:
        out += _bandwidth(where, "all", across, fabric_floor, instance,
                          " (set global.job.fabricGate.minBusBandwidthGBps)")
    return out


def judge_report(log: str, instance: str, efa: bool, min_busbw_gbps: float | None = None) -> list[GateFinding]:
    """The verdict on the probe's Ray job log (its report line): what the in-pod submit prints and refuses on."""
    line = next((x for x in reversed(log.splitlines()) if x.startswith(REPORT_PREFIX)), None)
    if line is None:
        return [GateFinding("error", "all", "the probe printed no report (its log ends: "
                            f"{' | '.join(log.strip().splitlines()[-3:]) or 'empty'})")]
    report = json.loads(line[len(REPORT_PREFIX):])
    dcgm = {host: parse_dcgm(text) for host, text in (report.get("dcgm") or {}).items()}
    per_node = {host: parse_all_reduce(text) for host, text in (report.get("per_node") or {}).items()}
    across = parse_all_reduce(report["across"]) if report.get("across") else None
    return judge(dcgm, per_node, across, instance, floor_for(instance, False),
                 floor_for(instance, True, min_busbw_gbps), efa)


def main(argv: list[str] | None = None) -> int:
    """A GPU machine's own check: the probe's output on stdin, its verdict for one instance type on stdout, exit 1
    on an error (`python3 probe.py ... | python3 -m grpo_stack.fabricgate.verdict p5.48xlarge`)."""
    import argparse
    import sys

    p = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    p.add_argument("instance_type")
    p.add_argument("--efa", action="store_true", help="require NCCL to name EFA as its network")
    opts = p.parse_args(argv)
    findings = judge_report(sys.stdin.read(), opts.instance_type, efa=opts.efa)
    for f in findings:
        print(f"{f.severity}: {f.node}: {f.message}")
    return 1 if any(f.severity == "error" for f in findings) else 0


if __name__ == "__main__":
    raise SystemExit(main())
