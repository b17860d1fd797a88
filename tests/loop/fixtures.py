"""Build the loop tier's tiny model and dataset. Runs in the loop venv (transformers, torch, pandas).

    python tests/loop/fixtures.py STORAGE_ROOT MODEL_REL TRAIN_REL VAL_REL --train-rows N --val-rows M

Writes a Qwen3 model of the shape tests/loop/overlay.yaml declares (random weights, seeded; the start-up tier's
byte-level tokenizer with Qwen's chat format; nothing from a hub) and the prompts in verl's RL layout: "spell
this word" with the word as the reference answer, data_source grpo-loop/spell, which the overlay routes to the
reward service's graded `chrf` scorer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.startup.build_fixtures import build_tokenizer  # noqa: E402

DATA_SOURCE = "grpo-loop/spell"
WORDS = ("ouagadougou", "reykjavik", "antananarivo", "tegucigalpa", "ulaanbaatar", "bujumbura", "nouakchott",
         "paramaribo", "ashgabat", "bishkek", "tbilisi", "yerevan")


def build_model(out: Path, shape: dict, eos_id: int, pad_id: int) -> None:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    config = Qwen3Config(hidden_size=shape["hidden"], intermediate_size=shape["intermediate"],
                         num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
                         num_key_value_heads=shape["kvHeads"], head_dim=shape["headDim"],
                         vocab_size=shape["vocab"], max_position_embeddings=shape["maxPositions"],
                         tie_word_embeddings=False, eos_token_id=eos_id, pad_token_id=pad_id)
    Qwen3ForCausalLM(config).to(torch.bfloat16).save_pretrained(out)


def build_data(path: Path, rows: int, split: str, offset: int) -> None:
    import pandas as pd

    records = []
    for i in range(rows):
        word = WORDS[(offset + i) % len(WORDS)]
        records.append({
            "data_source": DATA_SOURCE,
            "prompt": [{"role": "user", "content": f"Spell {word}."}],
            "ability": "spelling",
            "reward_model": {"style": "rule", "ground_truth": word},
            "extra_info": {"split": split, "index": i},
        })
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(records).to_parquet(path)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    p.add_argument("model")
    p.add_argument("train")
    p.add_argument("val")
    p.add_argument("--shape", required=True, help="global.job.model.shape as JSON")
    p.add_argument("--train-rows", type=int, required=True)
    p.add_argument("--val-rows", type=int, required=True)
    args = p.parse_args(argv)
    shape = json.loads(args.shape)
    model_dir = args.root / args.model
    model_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(model_dir)
    # verl masks the vocabulary past the tokenizer in vLLM only (vllm_async_server.py monkey_patch_model): a
    # larger table would make rollout and actor log-probs differ by log(vocab / tokenizer) at random weights.
    assert len(tokenizer) == shape["vocab"], (len(tokenizer), shape["vocab"])
    build_model(model_dir, shape, tokenizer.eos_token_id, tokenizer.pad_token_id)
    build_data(args.root / args.train, args.train_rows, "train", 0)
    build_data(args.root / args.val, args.val_rows, "val", args.train_rows)
    print(json.dumps({"model": str(model_dir)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
