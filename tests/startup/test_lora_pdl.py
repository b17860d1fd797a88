"""VLLM_LORA_DISABLE_PDL for LoRA rollouts on Blackwell (the verl review's B200 fix), where the job gets it.

The builder puts it into verl's Ray runtime env (ray_kwargs.ray_init.runtime_env.env_vars), which main_ppo
passes to ray.init, so every actor of the job, the vLLM servers included, inherits it. The start-up tier's
Megatron-LoRA run proves verl composes the key and hands it to ray.init (test_verl_startup.py).
"""

from __future__ import annotations

import pytest
from grpo_stack.job import build
from grpo_stack.job.verl import LORA_PDL_ENV

from .test_verl_startup import built_job

PDL_ARG = f"+{LORA_PDL_ENV}='1'"


def argv_for(shipped_values, set_values, name, overrides=None):
    from grpo_stack import render as render_module

    values = set_values(shipped_values[name], overrides or {})
    return build(render_module.job_spec(render_module.render(values, release="grpo", namespace="grpo"))).argv()


def test_235b_lora_on_p6_b200_disables_pdl(shipped_values):
    """Without it vLLM's LoRA kernels fail on B200 (the predecessor's Blackwell patch, later this env var)."""
    _, job = built_job(shipped_values, "qwen3-235b")
    assert PDL_ARG in job.argv()


@pytest.mark.parametrize("name", ["qwen3-8b", "qwen3-30b"])
def test_runs_without_lora_do_not_get_it(shipped_values, name):
    _, job = built_job(shipped_values, name)
    assert not any("VLLM_LORA_DISABLE_PDL" in a for a in job.argv())


def test_lora_on_hopper_does_not_get_it(shipped_values, set_values):
    """PDL stays on where it works (p5 / H100): the setting is tied to the GPU generation, not to LoRA alone."""
    argv = argv_for(shipped_values, set_values, "qwen3-235b",
                    {"global.cluster.gpuInstanceType": "p5.48xlarge", "vllm.instanceType": "p5.48xlarge"})
    assert not any("VLLM_LORA_DISABLE_PDL" in a for a in argv)
