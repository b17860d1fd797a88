"""Folds a PEFT LoRA adapter into its base model: python fold_lora.py BASE_DIR ADAPTER_DIR OUT_DIR.

Runs in the merge interpreter (the one with verl, torch, transformers and peft), not in grpo-stack's own venv.
"""

import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(base: str, adapter: str, out: str) -> int:
    model = AutoModelForCausalLM.from_pretrained(base, torch_dtype=torch.bfloat16)
    merged = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    merged.save_pretrained(out)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)  # vLLM reads the tokenizer from the model dir
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
