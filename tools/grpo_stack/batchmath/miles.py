"""miles dec268f7 batch and GPU-placement rules (batch-math.md section 3). Pure arithmetic.

W = actor nodes x GPUs per node; R = rollout_batch_size; k = n_samples_per_prompt; G = global_batch_size;
b = micro_batch_size; dp = W / (tp*pp*cp).
"""

from __future__ import annotations

from .core import WARNING, Violation, violation

# miles sets this placeholder --seq-length when none is given (backends/megatron_utils/arguments.py).
PLACEHOLDER_SEQ_LENGTH = 4096


def steps_per_rollout(rollout_batch: int, k: int, steps: int | None, global_batch: int) -> list[Violation]:
    """S1: with num_steps_per_rollout, G is R*k // steps and a given G must equal it."""
    if not steps:
        return []
    want = rollout_batch * k // steps
    if global_batch == want:
        return []
    return [violation("S1", f"global_batch_size={global_batch} != rollout_batch_size={rollout_batch} x k={k} // "
                            f"num_steps_per_rollout={steps} = {want}", "global_batch")]


def rollout_samples(rollout_batch: int, k: int, global_batch: int) -> list[Violation]:
    """S2: a rollout must hold one global batch; the remainder (R*k) % G is silently dropped."""
    samples = rollout_batch * k
    if samples < global_batch:
        return [violation("S2", f"rollout_batch_size={rollout_batch} x k={k} = {samples} samples < "
                                f"global_batch_size={global_batch}", "global_batch", related=("rollout_batch",))]
    dropped = samples % global_batch
    if dropped:
        return [violation("S2", f"rollout_batch_size={rollout_batch} x k={k} = {samples} samples: {dropped} are "
                                f"trimmed every rollout ({samples} % global_batch_size={global_batch})",
                          "global_batch", related=("rollout_batch",), severity=WARNING)]
    return []


def context_parallel_seq(seq_length: int, cp: int) -> list[Violation]:
    """S7: CP splits each sequence into 2*cp chunks."""
    if cp > 1 and seq_length % (2 * cp):
        return [violation("S7", f"seq_length={seq_length} is not divisible by 2 x cp = {2 * cp}", "cp")]
    return []


def placement(nodes: int, gpus_per_node: int, colocate: bool, configured_actor_nodes: int | None,
              rollout_gpus: int, per_engine: int) -> list[Violation]:
    """S10 colocate ignores the actor/rollout split; S11/S12 rollout GPUs, whole engines, whole nodes."""
    out = []
    if colocate and configured_actor_nodes is not None and configured_actor_nodes != nodes:
        out.append(violation("S10", f"colocate=true trains and rolls out on all {nodes} nodes; "
                                    f"actorNodes={configured_actor_nodes} is ignored", "actor_nodes",
                             severity=WARNING, fix="remove actorNodes (null) or set colocate: false"))
    if rollout_gpus <= 0:
        fix = f"set actorNodes below {nodes} or colocate: true" if nodes > 1 else "set colocate: true"
        return out + [violation("S11", f"actorNodes={configured_actor_nodes} of {nodes} nodes leaves no rollout "
                                       "GPUs (colocate=false)", "actor_nodes", fix=fix)]
    if per_engine > gpus_per_node and per_engine % gpus_per_node:
        out.append(violation("S12", f"a rollout engine of {per_engine} GPUs does not fill whole {gpus_per_node}-GPU "
                                    "nodes", "rollout_tp"))
    elif rollout_gpus < per_engine:
        out.append(violation("S12", f"{rollout_gpus} rollout GPUs cannot hold one {per_engine}-GPU engine",
                             "rollout_tp"))
    elif rollout_gpus % per_engine:
        out.append(violation("S12", f"{rollout_gpus} rollout GPUs / {per_engine} per engine: "
                                    f"{rollout_gpus % per_engine} GPUs stay idle", "rollout_tp", severity=WARNING))
    return out


def dynamic_tokens(dynamic: bool, max_tokens: int | None, cp: int, max_seq_len: int) -> list[Violation]:
    """S16 dynamic batch size needs max_tokens_per_gpu; S17 one sample must fit it (times cp)."""
    if not dynamic:
        return []
    if max_tokens is None:
        return [violation("S16", "use_dynamic_batch_size needs max_tokens_per_gpu", "max_token_len")]
    if max_tokens * cp < max_seq_len:
        return [violation("S17", f"max_tokens_per_gpu={max_tokens} x cp={cp} = {max_tokens * cp} < longest sample "
                                 f"{max_seq_len} (max_prompt + max_response)", "max_token_len")]
    return []
