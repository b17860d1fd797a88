"""megatron-core differential-test oracle worker. Runs INSIDE the oracle venv (megatron-core 0.16.1, CPU torch).

Protocol: one JSON case per stdin line, one JSON result per stdout line, in order.
  in:  {"id": str,
        "transformer": {TransformerConfig kwargs, e.g. num_layers, num_attention_heads, num_query_groups,
                        num_moe_experts, tensor_model_parallel_size, pipeline_model_parallel_size,
                        virtual_pipeline_model_parallel_size, context_parallel_size, expert_model_parallel_size,
                        expert_tensor_parallel_size, sequence_parallel, num_layers_in_first_pipeline_stage, ...}
                       | null,
        "microbatches": {"global_batch_size": int, "micro_batch_size": int, "data_parallel_size": int} | null}
  out: {"id", "transformer": verdict|null, "layers": verdict+"per_stage"|null,
        "microbatches": verdict+"num_microbatches"|null, "worker_error"}
  verdict = {"ok": bool|null, "error_type": str|null, "message": str|null}

Everything here is megatron-core's own code: TransformerConfig.__post_init__ (M5, M6, M7 config part, M8 uneven
PP, M9), transformer_block.get_num_layers_to_build per pipeline rank / virtual stage (M8 even PP and VPP) and
num_microbatches_calculator (M11). parallel_state (M1-M4) needs a process group and is not exercised.
"""

from __future__ import annotations

import json
import sys
import traceback
import warnings

MAX_MESSAGE = 4000
# Sizes that do not take part in any divisibility rule; defaults keep TransformerConfig constructible.
HEAD_DIM = 128

torch = TransformerConfig = get_num_layers_to_build = mbc = None


def _load_mcore() -> None:
    global torch, TransformerConfig, get_num_layers_to_build, mbc
    warnings.filterwarnings("ignore")
    import megatron.core.num_microbatches_calculator as _mbc
    import torch as _torch
    from megatron.core.transformer.transformer_block import get_num_layers_to_build as _layers
    from megatron.core.transformer.transformer_config import TransformerConfig as _tc

    torch, TransformerConfig, get_num_layers_to_build, mbc = _torch, _tc, _layers, _mbc


def _verdict(exc: BaseException | None) -> dict:
    if exc is None:
        return {"ok": True, "error_type": None, "message": None}
    return {"ok": False, "error_type": type(exc).__name__, "message": str(exc)[:MAX_MESSAGE]}


def _transformer_kwargs(given: dict) -> dict:
    kw = dict(given)
    kw.setdefault("num_layers", 2)
    kw.setdefault("num_attention_heads", 8)
    kw.setdefault("hidden_size", HEAD_DIM * kw["num_attention_heads"])
    kw.setdefault("ffn_hidden_size", 4 * kw["hidden_size"])
    # Pipeline parallelism requires pipeline_dtype; bf16 is what verl and miles train with.
    for key in ("pipeline_dtype", "params_dtype"):
        kw[key] = getattr(torch, kw[key]) if isinstance(kw.get(key), str) else kw.get(key, torch.bfloat16)
    kw.setdefault("bf16", True)
    return kw


def _layers(cfg) -> dict:
    """Ask megatron how many layers each (pp rank, virtual stage) builds; asserts carry M8's messages."""
    vpp = cfg.virtual_pipeline_model_parallel_size
    stages = range(vpp) if vpp else [None]
    try:
        per_stage = [
            [get_num_layers_to_build(cfg, vp_stage=vs, pp_rank=rank) for vs in stages]
            for rank in range(cfg.pipeline_model_parallel_size)
        ]
    except Exception as exc:  # noqa: BLE001 -- report, do not crash
        return {**_verdict(exc), "per_stage": None}
    return {**_verdict(None), "per_stage": per_stage}


def _microbatches(spec: dict) -> dict:
    mbc.destroy_num_microbatches_calculator()  # the calculator is a process-wide singleton
    try:
        mbc.init_num_microbatches_calculator(
            rank=0,
            rampup_batch_size=None,
            global_batch_size=spec["global_batch_size"],
            micro_batch_size=spec["micro_batch_size"],
            data_parallel_size=spec["data_parallel_size"],
            decrease_batch_size_if_needed=False,
        )
    except Exception as exc:  # noqa: BLE001 -- report, do not crash
        return {**_verdict(exc), "num_microbatches": None}
    return {**_verdict(None), "num_microbatches": mbc.get_num_microbatches()}


def evaluate(case: dict) -> dict:
    result = {"id": case.get("id"), "transformer": None, "layers": None, "microbatches": None, "worker_error": None}
    if case.get("transformer") is not None:
        try:
            cfg = TransformerConfig(**_transformer_kwargs(case["transformer"]))
        except Exception as exc:  # noqa: BLE001 -- __post_init__ errors, TypeError for unknown kwargs
            result["transformer"] = _verdict(exc)
        else:
            result["transformer"] = _verdict(None)
            result["layers"] = _layers(cfg)
    if case.get("microbatches") is not None:
        result["microbatches"] = _microbatches(case["microbatches"])
    return result


def main() -> None:
    out, sys.stdout = sys.stdout, sys.stderr  # keep stdout for the protocol only
    _load_mcore()
    for line in sys.stdin:
        if not line.strip():
            continue
        case = None
        try:
            case = json.loads(line)
            result = evaluate(case)
        except Exception:  # noqa: BLE001 -- the client waits for one line per case
            case_id = case.get("id") if isinstance(case, dict) else None
            result = {"id": case_id, "worker_error": traceback.format_exc()[-MAX_MESSAGE:]}
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
