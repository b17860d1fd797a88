"""Differential tier: grpo_stack.batchmath's Megatron rules against megatron-core 0.16.1 itself.

TransformerConfig (M5 heads % tp, M6 KV heads multiple or divisor of tp, M7 ep needs experts, M9 SP needs tp),
get_num_layers_to_build per pipeline rank and virtual stage (M2, M8) and the microbatch calculator (M11).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from grpo_stack.batchmath import megatron
from hypothesis import strategies as st

from .cases import draw, require_oracle

pytestmark = pytest.mark.oracle
CASES = 300


@pytest.fixture(scope="module")
def mcore_oracle():
    client = require_oracle()
    with open(os.devnull, "w") as quiet, client.OracleProcess(client.MCORE_WORKER, stderr=quiet) as proc:
        yield proc


@st.composite
def mcore_case(draw_):
    layers = draw_(st.sampled_from((24, 28, 32, 36, 40, 48, 61, 80, 94)))
    heads = draw_(st.sampled_from((14, 16, 28, 32, 40, 64)))
    kv = draw_(st.sampled_from([k for k in (1, 2, 4, 8, 16) if heads % k == 0]))
    tp = draw_(st.sampled_from((1, 2, 3, 4, 8, 16)))
    pp = draw_(st.sampled_from((1, 2, 3, 4, 8)))
    vpp = draw_(st.sampled_from((None, None, 2, 3, 4)))
    experts = draw_(st.sampled_from((0, 0, 64, 128)))
    ep = draw_(st.sampled_from((1, 1, 2, 4, 8)))
    sp = draw_(st.booleans())
    dp = draw_(st.sampled_from((1, 2, 3, 4, 6, 8, 12)))
    mb = draw_(st.sampled_from((1, 2, 4)))
    gbs = draw_(st.sampled_from((32, 64, 96, 100, 128, 240, 256)))
    return layers, heads, kv, tp, pp, vpp, experts, ep, sp, dp, mb, gbs


def request(i, case) -> dict:
    layers, heads, kv, tp, pp, vpp, experts, ep, sp, dp, mb, gbs = case
    transformer = {"num_layers": layers, "num_attention_heads": heads, "num_query_groups": kv,
                   "tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp,
                   "virtual_pipeline_model_parallel_size": vpp, "expert_model_parallel_size": ep,
                   "sequence_parallel": sp, "add_bias_linear": False}
    if experts:
        transformer |= {"num_moe_experts": experts, "moe_router_topk": 8, "moe_ffn_hidden_size": 768,
                        "expert_tensor_parallel_size": 1}
    return {"id": f"m{i}", "transformer": transformer,
            "microbatches": {"global_batch_size": gbs, "micro_batch_size": mb, "data_parallel_size": dp}}


def predicted(case) -> tuple[bool, bool, bool]:
    """(TransformerConfig fails, layer split fails, microbatch calculator fails) by grpo_stack.batchmath."""
    layers, heads, kv, tp, pp, vpp, experts, ep, sp, dp, mb, gbs = case
    config = megatron.attention_heads(heads, kv, tp) + megatron.sequence_parallel(sp, tp)
    # TransformerConfig checks only that experts exist; experts % ep is the MoE layer's (not built here).
    config += [v for v in megatron.experts(experts, ep) if experts == 0]
    # M2 (vpp needs pp > 1) is parallel_state's check, which needs a process group: not compared here.
    split = [v for v in megatron.layers(layers, pp, vpp) if v.rule_id != "M2"]
    return bool(config), bool(split), bool(megatron.microbatches(gbs, mb, dp))


def test_megatron_rules_match_megatron_core(mcore_oracle):
    """>= 200 generated layouts: our M2/M5/M6/M7/M8/M9/M11 verdicts equal megatron-core's."""
    cases = draw(mcore_case(), CASES)
    assert len(cases) >= 200
    results = mcore_oracle.ask([request(i, c) for i, c in enumerate(cases)])
    stats, problems = Counter(), []
    for case, result in zip(cases, results, strict=True):
        assert result["worker_error"] is None, result["worker_error"]
        config_fails, layers_fail, micro_fails = predicted(case)
        got_config = not result["transformer"]["ok"]
        # get_num_layers_to_build runs only on a config that built.
        got_layers = bool(result["layers"]) and not result["layers"]["ok"]
        got_micro = not result["microbatches"]["ok"]
        checks = [("transformer", config_fails, got_config, result["transformer"]["message"]),
                  ("microbatches", micro_fails, got_micro, result["microbatches"]["message"])]
        if not got_config:
            checks.append(("layers", layers_fail, got_layers, result["layers"]["message"]))
        for name, want, got, message in checks:
            stats[f"{name} {'agree' if want == got else 'disagree'}"] += 1
            stats[f"{name} failures"] += got
            if want != got:
                problems.append(f"{case}: {name}: megatron-core {message!r}, batchmath {'fails' if want else 'passes'}")
    print(f"\nmegatron-core oracle: {len(cases)} cases, {dict(stats)}")
    assert not problems, "\n".join(problems[:30])
    assert all(stats[f"{n} failures"] > 20 for n in ("transformer", "layers", "microbatches")), stats
