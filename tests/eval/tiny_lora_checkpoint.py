"""Run with the oracle venv's python (torch, transformers, peft, verl). Two commands:

  build OUT            a tiny Qwen2 base model + tokenizer (OUT/base), a LoRA adapter on it (OUT/adapter, PEFT
                       format) and the same model as verl's FSDP checkpoint manager saves it, sharded over two ranks
                       as DTensors (OUT/ckpt/global_step_3/actor: model_world_size_2_rank_{0,1}.pt, fsdp_config.json,
                       lora_train_meta.json, huggingface/)
  logits BASE ADAPTER MERGED   prints JSON: max |logits(merged) - logits(base + adapter)|, and the same against the
                       base alone (to show the adapter changes the output), on a fixed input
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import torch

RANK, ALPHA = 4, 8


def bf16_exact(model):
    """Every weight representable in bfloat16: verl's merger casts to bf16, so the comparison is not rounding."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(p.dtype))


def tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"t{i}": i for i in range(120)} | {"<unk>": 120, "<eos>": 121}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>")


def build(out: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, Qwen2Config

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         tie_word_embeddings=False)
    base = AutoModelForCausalLM.from_config(config)
    bf16_exact(base)
    base.save_pretrained(out / "base")
    tokenizer().save_pretrained(out / "base")
    model = get_peft_model(base, LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    with torch.no_grad():  # lora_B starts at zero: give the adapter an effect worth measuring
        for name, p in model.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn_like(p) * 0.5)
    bf16_exact(model)
    model.save_pretrained(out / "adapter")
    actor = out / "ckpt" / "global_step_3" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    config.save_pretrained(actor / "huggingface")
    tokenizer().save_pretrained(actor / "huggingface")
    (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": 2}))
    (actor / "lora_train_meta.json").write_text(json.dumps({"r": RANK, "lora_alpha": ALPHA, "task_type": "CAUSAL_LM"}))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    torch.save(state, out / "full_state.pt")
    with tempfile.TemporaryDirectory() as t:
        torch.multiprocessing.spawn(_save_shard, args=(out, actor, Path(t) / "pg"), nprocs=2, join=True)


def _save_shard(rank: int, out: Path, actor: Path, rendezvous: Path) -> None:
    """What FSDP2 leaves in each rank's checkpoint: every parameter a DTensor sharded on dim 0 over the mesh."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=2)
    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("fsdp",))
    state = torch.load(out / "full_state.pt", weights_only=True)
    shards = {k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in state.items()}
    torch.save(shards, actor / f"model_world_size_2_rank_{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


def logits(base: str, adapter: str, merged: str) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([[1, 5, 9, 17, 33, 65, 100, 3]])
    with torch.no_grad():
        plain = AutoModelForCausalLM.from_pretrained(base, torch_dtype=torch.float32).eval()
        ref_base = plain(ids).logits
        ref = PeftModel.from_pretrained(plain, adapter).eval()(ids).logits
        got = AutoModelForCausalLM.from_pretrained(merged, torch_dtype=torch.float32).eval()(ids).logits
    print(json.dumps({"merged_vs_adapter": (got - ref).abs().max().item(),
                      "adapter_effect": (ref - ref_base).abs().max().item(),
                      "scale": ref.abs().max().item()}))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]))
    else:
        logits(*sys.argv[2:5])
