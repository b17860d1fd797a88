"""An all-reduce's report in nccl-tests' format (`all_reduce_perf`, nccl-tests src/common.cu): the ranks and hosts
it ran on, one row per message size (out-of-place and in-place time, algorithm and bus bandwidth, wrong elements),
its trailer, and the network NCCL chose as NCCL_DEBUG=INFO prints it.

The gate's own probe (probe.py) prints the same table, so one reader serves both; the column layout of every
nccl-tests release since the `root` column (2.0) and the one before it are read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# `#  Rank  0 Group  0 Pid  31036 on ip-10-1-41-80 device  0 [0x10] NVIDIA A100-SXM4-40GB` (Group: nccl-tests 2.x)
RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)")
AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+|nan|inf)", re.IGNORECASE)
OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
# `ip-10-0-1-2: Test NCCL failure common.cu:958 'unhandled system error'` (also CUDA failures)
TEST_FAILURE = re.compile(r"^(\S+?):\s+Test (?:NCCL|CUDA) failure\b.*$")
# NCCL's INFO/WARN prefix: `host:pid:tid [cudaDev] NCCL INFO ...`
NCCL_LINE = re.compile(r"^(\S+?):\d+:\d+\s+\[\d+\]\s+NCCL\s+(INFO|WARN)\s+(.*)$")
USING_NETWORK = re.compile(r"\bUsing network\s+(.+?)\s*$")
# A launcher's per-line prefix: Open MPI's --tag-output (`[1,0]<stdout>:`), Slurm's srun --label (`0: `)
LAUNCHER_TAG = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: )")
DATA_TYPES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
              "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2"}


@dataclass(frozen=True)
class Row:
    size: int  # bytes
    busbw_out: float  # GB/s, out-of-place
    busbw_in: float  # GB/s, in-place
    wrong: int  # wrong elements, both passes (0 where validation is off: N/A)


@dataclass
class AllReduce:
    ranks: dict[int, str] = field(default_factory=dict)  # rank -> host
    rows: list[Row] = field(default_factory=list)
    avg_busbw: float | None = None
    out_of_bounds: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (host, line): a test that did not finish
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (host, NCCL WARN text)
    networks: dict[str, set[str]] = field(default_factory=dict)  # host -> as NCCL names them ("Socket", "IB")

    @property
    def hosts(self) -> list[str]:
        return sorted(set(self.ranks.values()))

    @property
    def peak_busbw(self) -> float | None:
        """The highest bus bandwidth of any size, either pass: what a floor is compared with (small messages are
        latency-bound; the largest sizes reach the link's bandwidth)."""
        return self.peak_busbw_from(0)

    def peak_busbw_from(self, size: int) -> float | None:
        return max((max(r.busbw_out, r.busbw_in) for r in self.rows if r.size >= size), default=None)

    @property
    def wrong(self) -> int:
        return sum(r.wrong for r in self.rows) + self.out_of_bounds

    @property
    def transport(self) -> str:
        """ofi | socket | ib | unknown (no NCCL_DEBUG=INFO line names the network) | mixed."""
        kinds = {network_kind(n) for names in self.networks.values() for n in names}
        return kinds.pop() if len(kinds) == 1 else ("unknown" if not kinds else "mixed")

    def hosts_on(self, kind: str) -> list[str]:
        return sorted(h for h, names in self.networks.items() if any(network_kind(n) == kind for n in names))


def network_kind(name: str) -> str:
    low = name.lower()
    if "libfabric" in low or "ofi" in low:
        return "ofi"
    if "socket" in low:
        return "socket"
    if low.startswith("ib") or "infiniband" in low:
        return "ib"
    return "other"


def _number(token: str) -> float:
    return float("nan") if token.upper() == "N/A" else float(token)


def _wrong(token: str) -> int:
    """#wrong is an integer count since nccl-tests 2.0. Before, the column was `error`, the largest deviation from
    the expected sum (`5e-07`: rounding, not a failure; those builds count failures in the `Out of bounds values`
    trailer). N/A: not validated."""
    if token.isdigit():
        return int(token)
    if token.upper() != "N/A":
        float(token)  # a deviation: must be a number (a garbled row is not a row), never counted
    return 0


def _row(tokens: list[str]) -> Row | None:
    if not tokens or not tokens[0].isdigit():
        return None
    try:
        at = next(i for i, t in enumerate(tokens) if t in DATA_TYPES)
    except StopIteration:
        return None
    rest = tokens[at + 2:]  # after type and redop
    if len(rest) == 9:  # root, then time algbw busbw #wrong for each pass
        rest = rest[1:]
    if len(rest) != 8:
        return None
    try:
        return Row(int(tokens[0]), _number(rest[2]), _number(rest[6]), _wrong(rest[3]) + _wrong(rest[7]))
    except ValueError:
        return None


def parse_all_reduce(text: str) -> AllReduce:
    out = AllReduce()
    for raw in text.splitlines():
        line = LAUNCHER_TAG.sub("", raw.strip(), count=1).strip()
        if m := RANK.match(line):
            out.ranks[int(m.group(1))] = m.group(2)
        elif m := AVG_BUSBW.match(line):
            out.avg_busbw = float(m.group(1))
        elif m := OUT_OF_BOUNDS.match(line):
            out.out_of_bounds = int(m.group(1))
        elif m := TEST_FAILURE.match(line):
            out.failures.append((m.group(1), line))
        elif m := NCCL_LINE.match(line):
            host, level, message = m.groups()
            if level == "WARN":
                out.warnings.append((host, message))
            elif n := USING_NETWORK.search(message):
                out.networks.setdefault(host, set()).add(n.group(1))
        elif not line.startswith("#") and (row := _row(line.split())):
            out.rows.append(row)
    return out
