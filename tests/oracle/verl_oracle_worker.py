"""verl differential-test oracle worker. Runs INSIDE the oracle venv (verl 0.9.1, CPU torch).

Protocol: one JSON case per stdin line, one JSON result per stdout line, in order.
  in:  {"id": str, "config_name": "ppo_trainer"|"ppo_megatron_trainer", "overrides": [str, ...],
        "fake_model": bool (optional, default false)}
  out: {"id", "compose_error", "startup", "rollout_config", "runtime", "context", "worker_error"}
See docs/oracle.md for the full schema.

Startup and rollout_config are verl's own validators. Runtime checks call verl's own CPU-callable
helpers with synthetic TensorDicts; only the glue that derives sizes (dp, padded batch) and the bare
asserts that live inside GPU-only worker code (R1, R9) are re-stated here, and those entries carry
"how": "restated".
"""

from __future__ import annotations

import json
import math
import os
import sys
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
FAKEMODEL_DIR = os.path.join(HERE, "fakemodel")
MAX_MESSAGE = 4000
# Rows used for the dynamic-bsz (R6) probe: the assert only looks at the longest sequence.
R6_ROWS = 2

# Heavy imports are bound in _load_verl() so that the import cost is paid once per process.
torch = TensorDict = tu = prepare_micro_batches = get_seqlen_balanced_partitions = None
compose = initialize_config_dir = validate_config = omega_conf_to_dataclass = None
need_reference_policy = need_critic = None


def _load_verl() -> str:
    global torch, TensorDict, tu, prepare_micro_batches, get_seqlen_balanced_partitions
    global compose, initialize_config_dir, validate_config, omega_conf_to_dataclass
    global need_reference_policy, need_critic
    warnings.filterwarnings("ignore")
    import torch as _torch
    import verl
    from hydra import compose as _compose
    from hydra import initialize_config_dir as _init
    from tensordict import TensorDict as _TD
    from verl.trainer.main_ppo import need_critic as _nc
    from verl.trainer.main_ppo import need_reference_policy as _nrp
    from verl.utils import tensordict_utils as _tu
    from verl.utils.config import omega_conf_to_dataclass as _o2d
    from verl.utils.config import validate_config as _vc
    from verl.utils.seqlen_balancing import get_seqlen_balanced_partitions as _gsbp
    from verl.workers.engine.utils import prepare_micro_batches as _pmb

    torch, TensorDict, tu, prepare_micro_batches, get_seqlen_balanced_partitions = _torch, _TD, _tu, _pmb, _gsbp
    compose, initialize_config_dir, validate_config, omega_conf_to_dataclass = _compose, _init, _vc, _o2d
    need_reference_policy, need_critic = _nrp, _nc
    _parse_config_files_once()
    return os.path.join(os.path.dirname(verl.__file__), "trainer", "config")


def _parse_config_files_once() -> None:
    """Hydra reads every file of the defaults tree again on each compose, and OmegaConf parses it with PyYAML's
    pure-Python loader: a quarter of a case's time. Here the same text is parsed once; OmegaConf still builds
    each compose's config from its own copy of the parsed document, and Hydra composes and merges as before."""
    import copy

    import omegaconf.omegaconf as omegaconf_module
    import yaml

    class ParsedOnce:
        """The `yaml` module as omegaconf.omegaconf sees it, with `load` answered from the text seen before."""

        def __init__(self):
            self.parsed = {}

        def __getattr__(self, name):
            return getattr(yaml, name)

        def load(self, stream, Loader):  # noqa: N803 -- PyYAML's keyword
            text = stream if isinstance(stream, str) else stream.read()
            if text not in self.parsed:
                self.parsed[text] = yaml.load(text, Loader=Loader)
            return copy.deepcopy(self.parsed[text])

    omegaconf_module.yaml = ParsedOnce()


def _msg(exc: BaseException) -> str:
    return str(exc)[:MAX_MESSAGE]


# ---------------------------------------------------------------- startup


def _with_fake_model(overrides: list[str]) -> list[str]:
    """Point actor and critic at the shipped config-only model dir (critic's HFModelConfig reads config.json)."""
    owned = ("actor_rollout_ref.model.path=", "critic.model.path=", "critic.model.load_tokenizer=")
    kept = [o for o in overrides if not o.lstrip("+").startswith(owned)]
    return kept + [
        f"actor_rollout_ref.model.path={FAKEMODEL_DIR}",
        f"critic.model.path={FAKEMODEL_DIR}",
        "+critic.model.load_tokenizer=False",
    ]


def _startup(cfg) -> dict:
    try:
        validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    except Exception as exc:  # noqa: BLE001 -- AssertionError, ValueError, InstantiationException
        return {"ok": False, "error_type": type(exc).__name__, "message": _msg(exc)}
    return {"ok": True, "error_type": None, "message": None}


def _rollout_config(cfg) -> dict:
    # RolloutConfig.__post_init__ (R12) is not reached by validate_config; workers build it at init.
    try:
        omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    except Exception as exc:  # noqa: BLE001 -- report, do not crash
        return {"ok": False, "error_type": type(exc).__name__, "message": _msg(exc)}
    return {"ok": True, "error_type": None, "message": None}


# ---------------------------------------------------------------- runtime glue (re-stated sizes)


def _engine_layout(owner, strategy: str, n_gpus: int) -> dict:
    """Data-parallel size and sequence-split size S of a training engine, as verl's engines compute them.

    FSDP:     dp = world // ulysses_sp           (engine/fsdp/transformer_impl.py get_data_parallel_size)
    Megatron: dp = world // (tp*pp*cp), 1 if dynamic_context_parallel
                                                 (engine/megatron/transformer_impl.py get_data_parallel_size)
    S is what prepare_micro_batches multiplies max_token_len_per_gpu by (sp_size: ulysses sp / megatron cp).
    """
    if strategy == "megatron":
        mg = owner.megatron
        tp, pp, cp = mg.tensor_model_parallel_size, mg.pipeline_model_parallel_size, mg.context_parallel_size
        model_parallel = tp * pp * cp
        if mg.get("dynamic_context_parallel", False):
            return {"dp": 1, "S": cp, "error": None}
        if n_gpus % model_parallel:
            return {"dp": None, "S": cp, "error": f"n_gpus {n_gpus} % (tp*pp*cp) {model_parallel} != 0"}
        return {"dp": n_gpus // model_parallel, "S": cp, "error": None}
    sp = owner.get("ulysses_sequence_parallel_size") or 1
    if sp <= 1:  # the deprecated top-level key wins only when > 1 (workers/config/actor.py)
        sp = owner.get("fsdp_config", {}).get("ulysses_sequence_parallel_size") or 1
    if n_gpus % sp:
        return {"dp": None, "S": sp, "error": f"n_gpus {n_gpus} % ulysses_sp {sp} != 0"}
    return {"dp": n_gpus // sp, "S": sp, "error": None}


def _context(cfg) -> dict:
    """Sizes the trainer and engines would use for the first step."""
    arr = cfg.actor_rollout_ref
    n_gpus = cfg.trainer.nnodes * cfg.trainer.n_gpus_per_node
    n = arr.rollout.n
    use_ref, use_critic = bool(need_reference_policy(cfg)), bool(need_critic(cfg))
    ctx = {
        "n_gpus": n_gpus,
        "strategy": arr.actor.strategy,
        "trainer": "v1" if cfg.trainer.get("use_v1", False) else "legacy",
        "balance_batch": bool(cfg.trainer.get("balance_batch", False)),
        "batch_rows": cfg.data.train_batch_size * n,
        "actor": _engine_layout(arr.actor, arr.actor.strategy, n_gpus),
        "ref": _engine_layout(arr.ref, arr.ref.strategy, n_gpus) if use_ref else None,
        "critic": _engine_layout(cfg.critic, cfg.critic.strategy, n_gpus) if use_critic else None,
        "max_seq_len": cfg.data.max_prompt_length + cfg.data.max_response_length,
    }
    ctx["padded_rows"] = _padded_rows(cfg, ctx, use_critic)
    return ctx


def _padded_rows(cfg, ctx: dict, use_critic: bool) -> int:
    """v1 trainer always pads the batch to lcm(dp, M*n[, M_critic*n]) (trainer/ppo/v1/trainer_base.py
    _get_required_batch_multiple + _balance_batch, called unconditionally each step); legacy does not pad."""
    rows, dp = ctx["batch_rows"], ctx["actor"]["dp"]
    if ctx["trainer"] != "v1" or dp is None:
        return rows
    n = cfg.actor_rollout_ref.rollout.n
    multiple = math.lcm(dp, cfg.actor_rollout_ref.actor.ppo_mini_batch_size * n)
    if use_critic:
        multiple = math.lcm(multiple, cfg.critic.ppo_mini_batch_size * n)
    return -(-rows // multiple) * multiple


# ---------------------------------------------------------------- runtime checks


def _td(rows: int, seq_len: int = 1):
    ones = torch.ones(rows, seq_len, dtype=torch.long)
    return TensorDict({"input_ids": ones, "attention_mask": ones.clone()}, batch_size=[rows])


def _entry(check: str, role: str, ok, message=None, how="called") -> dict:
    return {"check": check, "role": role, "ok": ok, "message": message, "how": how}


def _call(check: str, role: str, fn) -> dict:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- verl's helpers fail with bare AssertionError
        text = _msg(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {_msg(exc)}"
        return _entry(check, role, False, text)
    return _entry(check, role, True)


def _skip(check: str, role: str, why: str) -> dict:
    return _entry(check, role, None, f"skipped: {why}")


def _exact(num: int, den: int):
    return num // den if den and num % den == 0 else None


def _static_micro(check: str, role: str, rows, micro) -> dict:
    if rows is None:
        return _skip(check, role, "per-dp size is not an integer (R1/R4)")
    if micro is None:
        return _skip(check, role, "micro_batch_size_per_gpu unset")

    def run():
        data = _td(rows)
        tu.assign_non_tensor(data, use_dynamic_bsz=False, micro_batch_size_per_gpu=micro)
        prepare_micro_batches(data)

    return _call(check, role, run)


def _dynamic_tokens(role: str, max_token_len_per_gpu, sp_size: int, max_seq_len: int) -> dict:
    if max_token_len_per_gpu is None:
        return _skip("R6", role, "max_token_len_per_gpu unset")

    def run():
        data = _td(R6_ROWS, max_seq_len)
        tu.assign_non_tensor(data, use_dynamic_bsz=True, max_token_len_per_gpu=max_token_len_per_gpu, sp_size=sp_size)
        prepare_micro_batches(data)

    return _call("R6", role, run)


def _r1(role: str, mini_rows: int, dp) -> dict:
    # Re-stated from verl/workers/engine_workers.py (0.9.1) TrainingWorker.train_mini_batch:
    #     assert mini_batch_size % self.engine.get_data_parallel_size() == 0, (
    #         f"Got {mini_batch_size=} and {self.engine.get_data_parallel_size()=}")
    # with mini_batch_size = ppo_mini_batch_size * rollout.n (ray_trainer / v1 trainer_base _update_actor).
    ok = mini_rows % dp == 0
    msg = None if ok else f"Got mini_batch_size={mini_rows} and self.engine.get_data_parallel_size()={dp}"
    return _entry("R1", role, ok, msg, how="restated")


def _r4(role: str, rows: int, dp: int, balanced: bool) -> dict:
    if balanced:  # seqlen balancing into equal-size dp partitions
        return _call("R4", role, lambda: get_seqlen_balanced_partitions([1] * rows, k_partitions=dp, equal_size=True))
    return _call("R4", role, lambda: tu.chunk_tensordict(_td(rows), dp))  # dispatch split to dp ranks


def _r9(cfg, n_gpus: int) -> dict:
    # Re-stated from verl/workers/engine_workers.py (0.9.1) ActorRolloutRefWorker.init_model:
    #     assert self.world_size % infer_world_size == 0, (
    #         f"rollout world_size: {self.world_size} is not divisible by infer_world_size: {infer_world_size}")
    # with infer_world_size = rollout tp * rollout dp * rollout pp.
    ro = cfg.actor_rollout_ref.rollout
    infer = ro.tensor_model_parallel_size * ro.data_parallel_size * ro.pipeline_model_parallel_size
    ok = n_gpus % infer == 0
    msg = None if ok else f"rollout world_size: {n_gpus} is not divisible by infer_world_size: {infer}"
    return _entry("R9", "rollout", ok, msg, how="restated")


def _update_checks(role: str, owner, layout: dict, ctx: dict, n: int) -> list[dict]:
    """R1/R3/R4 and R2 (static) or R6 (dynamic) for a role that trains (actor, critic)."""
    dp = layout["dp"]
    if dp is None:
        return [_skip(c, role, layout["error"]) for c in ("R1", "R4", "R3", "R2")]
    rows = ctx["padded_rows"]
    mini_rows = owner.ppo_mini_batch_size * n
    balanced = role == "actor" and (ctx["trainer"] == "v1" or ctx["balance_batch"])
    out = [_r1(role, mini_rows, dp), _r4(role, rows, dp, balanced)]
    per_dp, per_dp_mini = _exact(rows, dp), _exact(mini_rows, dp)
    if per_dp is None or per_dp_mini is None:
        out.append(_skip("R3", role, "per-dp batch or per-dp mini batch is not an integer (R1/R4)"))
    else:
        out.append(_call("R3", role, lambda: next(iter(tu.make_iterator(_td(per_dp), per_dp_mini, epochs=1)))))
    if owner.use_dynamic_bsz:
        out.append(_dynamic_tokens(role, owner.ppo_max_token_len_per_gpu, layout["S"], ctx["max_seq_len"]))
    else:
        out.append(_static_micro("R2", role, per_dp_mini, owner.ppo_micro_batch_size_per_gpu))
    return out


def _log_prob_checks(role: str, owner, layout: dict, ctx: dict) -> list[dict]:
    """R5 (static) or R6 (dynamic) for a forward-only log-prob pass (actor old log-prob, ref)."""
    dp = layout["dp"]
    if dp is None:
        return [_skip("R5", role, layout["error"])]
    out = [] if role == "actor" else [_r4(role, ctx["padded_rows"], dp, balanced=False)]
    if owner.log_prob_use_dynamic_bsz:
        out.append(_dynamic_tokens(role, owner.log_prob_max_token_len_per_gpu, layout["S"], ctx["max_seq_len"]))
    else:
        per_dp = _exact(ctx["padded_rows"], dp)
        out.append(_static_micro("R5", role, per_dp, owner.log_prob_micro_batch_size_per_gpu))
    return out


def _runtime(cfg, ctx: dict) -> list[dict]:
    arr, n = cfg.actor_rollout_ref, cfg.actor_rollout_ref.rollout.n
    checks = _update_checks("actor", arr.actor, ctx["actor"], ctx, n)
    checks += _log_prob_checks("actor", arr.rollout, ctx["actor"], ctx)
    if ctx["ref"] is not None:
        checks += _log_prob_checks("ref", arr.ref, ctx["ref"], ctx)
    if ctx["critic"] is not None:
        checks += _update_checks("critic", cfg.critic, ctx["critic"], ctx, n)
    checks.append(_r9(cfg, ctx["n_gpus"]))
    return checks


# ---------------------------------------------------------------- driver


def evaluate(case: dict) -> dict:
    result = {
        "id": case.get("id"),
        "compose_error": None,
        "startup": None,
        "rollout_config": None,
        "runtime": [],
        "context": None,
        "worker_error": None,
    }
    overrides = list(case.get("overrides", []))
    if case.get("fake_model"):
        overrides = _with_fake_model(overrides)
    try:
        cfg = compose(config_name=case.get("config_name", "ppo_trainer"), overrides=overrides)
    except Exception as exc:  # noqa: BLE001 -- unknown keys: overrides do not compose
        result["compose_error"] = f"{type(exc).__name__}: {_msg(exc)}"
        return result
    result["startup"] = _startup(cfg)
    result["rollout_config"] = _rollout_config(cfg)
    ctx = _context(cfg)
    result["context"] = ctx
    result["runtime"] = _runtime(cfg, ctx)
    return result


def _serve(out) -> None:
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


def main() -> None:
    # verl and its dependencies print to stdout; keep stdout for the protocol only.
    out, sys.stdout = sys.stdout, sys.stderr
    config_dir = _load_verl()
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        _serve(out)


if __name__ == "__main__":
    main()
