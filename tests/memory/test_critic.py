"""verl's critic (PPO with GAE, verl's default estimator) in the memory model: its states beside the actor's
phases, its own two passes, the process peak verl logs, and GRPO920's severity where the run does not name its
model. Where the check stops: verl's source (need_critic, the critic's config defaults, one worker process per
colocated GPU); no GPU runs here."""

from __future__ import annotations

from grpo_stack.lint.rules.gpu_memory import SEVERITY, findings_for_run
from grpo_stack.memory import estimate
from grpo_stack.memory.calibrate import predicted_gib
from grpo_stack.memory.resolve import AR, FIX_KEYS, verl_run

from .rows import preset

H100 = 81920 * 2**20
# Qwen2.5-7B on four H100s, FSDP, nothing offloaded, vLLM at 0.45: the actor's states and the engine fit beside
# each other; a critic of the same size left on the GPU between its passes does not.
HYDRA = {"trainer.n_gpus_per_node": 4, f"{AR}.model.path": "Qwen/Qwen2.5-7B-Instruct",
         f"{AR}.rollout.tensor_model_parallel_size": 1, f"{AR}.rollout.gpu_memory_utilization": 0.45,
         "data.max_prompt_length": 512, "data.max_response_length": 1024, "data.train_batch_size": 64,
         f"{AR}.actor.ppo_mini_batch_size": 16, f"{AR}.actor.ppo_micro_batch_size_per_gpu": 2}
PPO = {**HYDRA, "algorithm.adv_estimator": "gae", "critic.model.path": "Qwen/Qwen2.5-7B-Instruct",
       "critic.ppo_micro_batch_size_per_gpu": 2}
OFFLOADED = {"critic.model.fsdp_config.param_offload": True, "critic.model.fsdp_config.optimizer_offload": True}


def run(values: dict):
    return verl_run(preset("qwen2.5-7b"), values, False, H100, None)


def verdict(values: dict) -> str:
    severities = {(h.severity or SEVERITY).value for h in findings_for_run(
        run(values), "", FIX_KEYS["verl-hydra-fsdp"], lambda kind: {"key_path": kind})}
    return "error" if "error" in severities else "warning" if "warning" in severities else "none"


def test_the_critic_left_on_the_gpu_decides_the_verdict_and_offloading_it_fits():
    grpo, ppo, offloaded = (estimate(run(v)) for v in ({**HYDRA, "algorithm.adv_estimator": "grpo"}, PPO,
                                                       {**PPO, **OFFLOADED}))
    assert grpo.run.critic is None and not grpo.oom
    assert ppo.oom and ppo.run.critic is not None
    rollout = next(p for p in ppo.phases if p.name == "rollout")
    assert {"critic weights", "critic optimizer"} <= {x.name for x in rollout.terms}
    assert not offloaded.oom
    assert {p.name for p in offloaded.phases} >= {"critic-values", "critic-update"}
    assert verdict(PPO) == "error"


def test_verl_trains_a_critic_by_default_and_grpo_trains_none():
    """need_critic: critic.enable when stated, else algorithm.adv_estimator gae (verl's default)."""
    assert run(HYDRA).critic is not None
    assert run({**HYDRA, "algorithm.adv_estimator": "grpo"}).critic is None
    assert run({**HYDRA, "algorithm.adv_estimator": "grpo", "critic.enable": True}).critic is not None
    assert run({**PPO, "critic.enable": False}).critic is None


def test_a_critic_whose_model_the_run_does_not_name_is_a_warning_naming_it():
    """The default estimator with no critic.model.path: the critic is taken as the actor's size, the error rests on
    the run without it, and the warning says which key decides."""
    hits = list(findings_for_run(run(HYDRA), "", FIX_KEYS["verl-hydra-fsdp"], lambda kind: {"key_path": kind}))
    assert run(HYDRA).critic.assumed and verdict(HYDRA) == "warning"
    assert any("critic.model.path" in h.message and "critic.model.path" in h.remediation for h in hits)


def test_the_peak_verl_logs_covers_the_critic_passes_of_its_process():
    """verl's perf/max_memory_allocated_gb is its worker process's peak; the colocated critic shares that process."""
    report = estimate(run({**PPO, **OFFLOADED}))
    update = next(p for p in report.phases if p.name == "critic-update")
    assert predicted_gib(report, "verl") >= update.allocated / 2**30
