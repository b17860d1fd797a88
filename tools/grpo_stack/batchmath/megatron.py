"""Megatron-core / Megatron-LM parallel layout rules (batch-math.md section 4). Pure arithmetic."""

from __future__ import annotations

from .core import WARNING, Violation, violation


def world_model_parallel(world: int, tp: int, pp: int, cp: int) -> list[Violation]:
    """M1 / V1 / S4: the world splits into whole tp*pp*cp model replicas."""
    size = tp * pp * cp
    if world % size == 0:
        return []
    return [violation("M1", f"world size {world} is not divisible by tp*pp*cp = {tp}*{pp}*{cp} = {size} "
                            f"(remainder {world % size})", "tp", related=("pp", "cp", "nnodes"))]


def expert_world(world: int, tp: int, etp: int | None, ep: int, pp: int) -> list[Violation]:
    """M3: experts split the world into etp*ep*pp blocks (etp defaults to tp)."""
    etp = tp if etp is None else etp
    if ep == 1 and etp == tp:
        return []  # the dense grid: M1 (world % tp*pp*cp) already covers it
    size = etp * ep * pp
    if world % size == 0:
        return []
    return [violation("M3", f"world size {world} is not divisible by etp*ep*pp = {etp}*{ep}*{pp} = {size}",
                      "ep", related=("etp", "tp", "pp", "nnodes"))]


def experts(num_experts: int, ep: int) -> list[Violation]:
    """M7 / S6: ep > 1 needs a MoE model whose routed experts split evenly."""
    if ep <= 1:
        return []
    if num_experts == 0:
        return [violation("M7", f"expert parallel size {ep} on a dense model (no experts)", "ep")]
    if num_experts % ep:
        return [violation("M7", f"{num_experts} experts are not divisible by expert parallel size {ep}", "ep")]
    return []


def attention_heads(heads: int, kv_heads: int, tp: int, *, kv_divisor_ok: bool = True) -> list[Violation]:
    """M5 heads % tp; M6 KV heads a multiple or (core >= 0.16) a divisor of tp."""
    out = []
    if heads % tp:
        out.append(violation("M5", f"{heads} attention heads are not divisible by tensor parallel size {tp}", "tp"))
    kv_ok = kv_heads % tp == 0 or (kv_divisor_ok and tp % kv_heads == 0)
    if not kv_ok:
        rule = "a multiple or divisor" if kv_divisor_ok else "a multiple"
        out.append(violation("M6", f"{kv_heads} KV heads are not {rule} of tensor parallel size {tp}", "tp"))
    return out


def layers(num_layers: int, pp: int, vpp: int | None) -> list[Violation]:
    """M2 vpp needs pp > 1; M8 even pipeline split, and per-rank layers % vpp."""
    if vpp is not None and vpp > 1 and pp <= 1:
        return [violation("M2", f"virtual pipeline size {vpp} needs pipeline parallel size > 1 (pp={pp})", "vpp",
                          related=("pp",))]
    if num_layers % pp:
        return [violation("M8", f"{num_layers} layers are not divisible by pipeline parallel size {pp} "
                                f"(remainder {num_layers % pp})", "pp")]
    per_rank = num_layers // pp
    if vpp and vpp > 1 and per_rank % vpp:
        return [violation("M8", f"{per_rank} layers per pipeline rank ({num_layers}/{pp}) are not divisible by "
                                f"virtual pipeline size {vpp}", "vpp", related=("pp",))]
    return []


def sequence_parallel(sequence_parallel: bool, tp: int) -> list[Violation]:
    """M9: sequence parallelism shards along tp; verl and Megatron-LM switch it off at tp == 1."""
    if sequence_parallel and tp <= 1:
        return [violation("M9", "sequence parallelism needs tensor parallel size > 1 (tp=1); it is switched off",
                          "sequence_parallel", related=("tp",), severity=WARNING)]
    return []


def microbatches(global_batch: int, micro: int, dp: int) -> list[Violation]:
    """M11 / S3: the global batch is a whole number of micro batches on every data-parallel rank."""
    if global_batch % (micro * dp) == 0:
        return []
    return [violation("M11", f"global batch {global_batch} is not divisible by micro batch {micro} x dp {dp} = "
                             f"{micro * dp} (remainder {global_batch % (micro * dp)})", "global_batch",
                      related=("micro", "dp"))]
