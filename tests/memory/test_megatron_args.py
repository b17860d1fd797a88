"""A model's architecture read from the Megatron model arguments a miles command spells (MODEL_ARGS): the same
parameters as the catalogue's config.json for the same model, Megatron's defaults where an argument is left out,
and nothing guessed where a fact is missing. Where the check stops: Megatron itself is not run; the defaults are
read from megatron/training/arguments.py @d98e8a64 (cited in arch.from_megatron_args)."""

from __future__ import annotations

import shlex

import pytest
from grpo_stack.catalog.models import MODELS
from grpo_stack.memory.arch import from_megatron_args, from_shape, moe_pattern
from grpo_stack.memory.resolve import argv_options

# MODEL_ARGS as slime's scripts/models/qwen3-4B.sh and qwen3-30B-A3B.sh spell them (the pattern quoted twice)
QWEN3_4B = ("--swiglu --num-layers 36 --hidden-size 2560 --ffn-hidden-size 9728 --num-attention-heads 32 "
            "--group-query-attention --num-query-groups 8 --use-rotary-position-embeddings --disable-bias-linear "
            "--normalization RMSNorm --norm-epsilon 1e-6 --rotary-base 1000000 --vocab-size 151936 --kv-channels 128 "
            "--qk-layernorm")
QWEN3_30B_A3B = ("--disable-bias-linear --qk-layernorm --group-query-attention --num-attention-heads 32 "
                 "--num-query-groups 4 --kv-channels 128 --num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 "
                 "--normalization RMSNorm --position-embedding-type rope --norm-epsilon 1e-6 --rotary-percent 1.0 "
                 "--swiglu --untie-embeddings-and-output-weights --vocab-size 151936 --rotary-base 1000000 "
                 "--moe-ffn-hidden-size 768 --moe-router-score-function softmax --moe-token-dispatcher-type alltoall "
                 "--moe-router-topk 8 --moe-layer-freq \"'([1]*48)'\" --num-experts 128 --moe-grouped-gemm")


def _arch(args: str):
    return from_megatron_args(argv_options(shlex.split(args)))


@pytest.mark.parametrize(("args", "preset"), [(QWEN3_4B, "qwen3-4b"), (QWEN3_30B_A3B, "qwen3-30b-a3b")])
def test_model_arguments_count_the_catalogued_models_parameters(args, preset):
    arch, catalogued = _arch(args), from_shape(MODELS[preset])
    assert arch.total() == pytest.approx(catalogued.total(), rel=1e-4)
    assert (arch.experts, arch.topk, arch.moe_ffn) == (catalogued.experts, catalogued.topk, catalogued.moe_ffn)


def test_megatron_defaults_fill_what_the_arguments_leave_out():
    arch = _arch("--num-layers 12 --hidden-size 512 --num-attention-heads 8 --vocab-size 50257 "
                 "--tensor-model-parallel-size 2")
    assert arch.ffn == 4 * 512 and not arch.gated  # GELU, 4h
    assert arch.kv_heads == 8 and arch.head_dim == 64  # no --group-query-attention: one KV head per head
    assert arch.vocab == 50432  # padded to a multiple of 128 x TP 2
    assert arch.tied and arch.norm_params == 2 and arch.qkv_bias  # tied, LayerNorm, biases on
    swiglu = _arch("--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 --swiglu")
    assert swiglu.ffn == 10880  # int(4h x 2/3 / 64) x 64


def test_moe_layer_frequency_sets_the_dense_layers():
    base = "--num-layers 16 --hidden-size 1024 --num-attention-heads 8 --vocab-size 32000 --num-experts 8 "
    assert _arch(base + "--moe-layer-freq ([0]*1+[1]*15)").dense_layers == 1
    assert _arch(base + "--moe-layer-freq 2").dense_layers == 8
    assert _arch(base).dense_layers == 0 and _arch(base).topk == 2  # every layer MoE, top-2 routing
    assert moe_pattern("([1]*3+[0]*2)*2", 10) == [1, 1, 1, 0, 0] * 2
    assert moe_pattern("[0,1,1,1]", 4) == [0, 1, 1, 1]  # a list printed by the script itself


@pytest.mark.parametrize("freq", ["__import__('os').system('true')", "([0]*3+[1]*58)", "[2]*16", "([1]*16)**2"])
def test_a_moe_pattern_that_is_not_a_list_of_the_models_layers_is_not_read(freq):
    assert moe_pattern(freq, 16) is None


@pytest.mark.parametrize("missing", ["--vocab-size 151936", "--num-layers 36", "--hidden-size 2560"])
def test_a_missing_fact_is_not_guessed(missing):
    assert _arch(QWEN3_4B.replace(missing, "")) is None
