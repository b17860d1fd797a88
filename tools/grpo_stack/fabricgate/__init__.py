"""The GPU and fabric gate: reads what DCGM's diagnostics and an NCCL all-reduce report on the nodes a run received
and refuses the run, naming the node, before training starts (docs/observability.md, "GPU and fabric gate")."""

from .dcgm import DcgmDiag, parse_dcgm
from .nccl import AllReduce, parse_all_reduce
from .probe import REPORT_PREFIX
from .verdict import GateFinding, judge, judge_report

__all__ = ["REPORT_PREFIX", "AllReduce", "DcgmDiag", "GateFinding", "judge", "judge_report", "parse_all_reduce",
           "parse_dcgm"]
