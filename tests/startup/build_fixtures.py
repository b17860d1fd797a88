"""Build a tiny model and a tiny dataset for the start-up tier. Runs in the start-up venv (transformers, pandas).

    python build_fixtures.py OUT_DIR --arch qwen3|qwen3_moe --rows N

Writes OUT_DIR/model (random weights, a byte-level tokenizer with a chat template, saved with transformers;
nothing comes from a hub) and OUT_DIR/data/{train,val}.parquet in verl's documented RL layout
(data_source, prompt as chat messages, ability, reward_model {style, ground_truth}, extra_info).
The shapes divide every parallel size the shipped values files use (TP <= 8, PP <= 4, EP <= 8).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Qwen's chat format, reduced to what verl's dataset uses (add_generation_prompt).
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
VOCAB_SIZE = 512  # 256 byte tokens + specials, padded to a multiple every TP size divides
# head_dim 64: a size vLLM's attention kernels accept, so vLLM on a GPU could serve the same model.
SHAPE = {
    "hidden_size": 512,
    "intermediate_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "max_position_embeddings": 32768,
    "vocab_size": VOCAB_SIZE,
    "tie_word_embeddings": False,
}
MOE_SHAPE = {"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 1,
             "mlp_only_layers": []}


def build_tokenizer(out: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    byte_vocab = pre_tokenizers.ByteLevel.alphabet()
    vocab = {tok: i for i, tok in enumerate(sorted(byte_vocab))}
    for special in SPECIAL_TOKENS:
        vocab[special] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIAL_TOKENS)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return fast


def build_model(out: Path, arch: str, eos_id: int, pad_id: int) -> None:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM

    torch.manual_seed(0)
    if arch == "qwen3":
        config, cls = Qwen3Config(**SHAPE), Qwen3ForCausalLM
    elif arch == "qwen3_moe":
        config, cls = Qwen3MoeConfig(**SHAPE, **MOE_SHAPE), Qwen3MoeForCausalLM
    else:
        raise SystemExit(f"unknown --arch {arch!r} (qwen3 or qwen3_moe)")
    config.eos_token_id, config.pad_token_id = eos_id, pad_id
    model = cls(config).to(torch.bfloat16)
    model.save_pretrained(out)


def build_data(out: Path, rows: int) -> None:
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", rows), ("val", max(2, rows // 8))):
        records = []
        for i in range(n):
            a, b = i % 7 + 1, i % 5 + 2
            records.append({
                "data_source": "openai/gsm8k",
                "prompt": [{"role": "user", "content": f"What is {a} + {b}? Put the answer in \\boxed{{}}."}],
                "ability": "math",
                "reward_model": {"style": "rule", "ground_truth": str(a + b)},
                "extra_info": {"split": split, "index": i},
            })
        pd.DataFrame(records).to_parquet(out / f"{split}.parquet")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--arch", required=True)
    parser.add_argument("--rows", type=int, required=True)
    args = parser.parse_args(argv)
    model_dir = args.out / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(model_dir)
    build_model(model_dir, args.arch, tokenizer.eos_token_id, tokenizer.pad_token_id)
    # The tokenizer's ids must fit the model's embedding table.
    assert len(tokenizer) <= VOCAB_SIZE, len(tokenizer)
    build_data(args.out / "data", args.rows)
    print(json.dumps({"model": str(model_dir), "data": str(args.out / "data")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
