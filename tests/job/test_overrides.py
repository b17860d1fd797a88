"""job.verl.overrides: an escape hatch that cannot become a dead knob or a second copy of a typed value."""

from __future__ import annotations

import copy

import pytest
from grpo_stack.catalog import verl_keys
from grpo_stack.job import BuildError, build
from grpo_stack.job.verl import owned_keys

ALL_KNOBS = {
    "optim": {"lr": 2e-6, "warmupSteps": 10, "schedule": "cosine", "weightDecay": 0.05, "gradClip": 0.5},
    "kl": {"placement": "loss", "coef": 0.002, "estimator": "k2"}, "entropyCoef": 0.01,
    "clipRatio": {"low": 0.2, "high": 0.28}, "lossAggregation": "seq-mean-token-mean",
    "resume": {"mode": "fromPath", "path": "checkpoints/x/global_step_10"},
    "validation": {"n": 4, "temperature": 0.6, "topP": 0.95}, "offload": {"params": True, "optimizer": True},
    "seed": 7, "lora": {"rank": 32, "alpha": 64, "targetModules": "q_proj,v_proj"},
}


def _spec(base_specs, name: str, **job) -> dict:
    spec = copy.deepcopy(base_specs[name])
    spec["job"].update(copy.deepcopy(job))
    return spec


@pytest.mark.parametrize("name", ["qwen3-8b", "qwen3-30b"])
def test_every_optional_knob_key_is_owned(base_specs, name):
    """An override must not be able to set a key a typed knob sets (the fact would be written twice)."""
    spec = _spec(base_specs, name, **ALL_KNOBS)
    megatron = spec["job"]["backend"] == "megatron"
    owned = owned_keys(megatron)
    for kl in ({"placement": "loss", "coef": 0.1, "estimator": "k3"}, {"placement": "reward", "coef": 0.1,
                                                                          "estimator": "k3"}):
        built = build({**spec, "job": {**spec["job"], "kl": kl}})
        for arg in built.args:
            if arg.source.startswith("values: global.job.") and not arg.source.startswith(
                    ("values: global.job.verl.", "values: global.job.data", "values: global.job.lengths",
                     "values: global.job.model", "values: global.job.rollout", "values: global.job.parallel",
                     "values: global.job.trainer.")):
                assert arg.key in owned, arg


def test_owned_keys_are_verl_keys():
    """The owned table names real verl 0.9.1 keys (a typo there would let the real key through)."""
    for config, megatron in (("ppo_trainer", False), ("ppo_megatron_trainer", True)):
        known = verl_keys.keys(config)
        missing = [k for k in owned_keys(megatron) if k not in known]
        assert not missing, (config, missing)


def test_every_emitted_key_is_a_verl_key(base_specs):
    """Every key the builder emits exists in verl's composed config (or an open map, with +)."""
    for name, spec in base_specs.items():
        if spec["job"]["framework"] != "verl":
            continue
        built = build(_spec(base_specs, name, **ALL_KNOBS))
        config = built.entrypoint[-1].removeprefix("--config-name=")
        keys = verl_keys.keys(config)
        for arg in built.args:
            key = arg.key.removeprefix("+")
            if key in keys or verl_keys.open_map(config, key):
                continue
            # Hydra's `+` adds a key under an existing mapping (ray_kwargs.ray_init.runtime_env for the vLLM
            # LoRA env var; the start-up tier composes it with verl's own config).
            parent = key.rsplit(".", 2)[0]
            assert arg.key.startswith("+") and any(k.startswith(parent + ".") for k in keys), (name, key)


@pytest.mark.parametrize(("override", "message"), [
    ({"actor_rollout_ref.actor.optim.lr": 1e-5}, "set global.job.optim.lr instead"),
    ({"data.train_batch_size": 4}, "already set from global.job.verl.batch.trainBatchSize"),
    ({"actor_rollout_ref.rollout.enforce_eagr": True}, "did you mean actor_rollout_ref.rollout.enforce_eager"),
])
def test_refused_overrides_name_the_key_to_use(base_specs, override, message):
    spec = copy.deepcopy(base_specs["qwen3-8b"])
    spec["job"]["verl"]["overrides"] = override
    with pytest.raises(BuildError, match=message.replace(".", r"\.")):
        build(spec)


def test_accepted_override_reaches_the_command(base_specs):
    spec = copy.deepcopy(base_specs["qwen3-8b"])
    spec["job"]["verl"]["overrides"] = {"actor_rollout_ref.rollout.enforce_eager": True,
                                        "actor_rollout_ref.rollout.engine_kwargs.vllm.max_num_partial_prefills": 2}
    argv = build(spec).argv()
    assert "actor_rollout_ref.rollout.enforce_eager=true" in argv
    assert "+actor_rollout_ref.rollout.engine_kwargs.vllm.max_num_partial_prefills=2" in argv


def test_resume_fails_closed(base_specs):
    """Without job.resume the run never resumes whatever sits in the checkpoint directory (verl's auto would)."""
    argv = build(base_specs["qwen3-8b"]).argv()
    assert "trainer.resume_mode=disable" in argv


MEGATRON_LAYERS = "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers"


@pytest.mark.parametrize(("key", "value", "says"), [
    # Megatron gets the section as given: a string where it declares int | None (YAML 1.1 reads 1e309 as one).
    (MEGATRON_LAYERS, "1e309", "megatron.core.transformer.TransformerConfig"),
    (MEGATRON_LAYERS, "\u200b", "int | null"),
    # verl builds the actor from the values as given: 1.5 epochs, a boolean count.
    ("actor_rollout_ref.actor.ppo_epochs", 1.5, "verl passes it on as given"),
    ("actor_rollout_ref.actor.ppo_epochs", True, "is not int"),
    # OmegaConf converts "0.95" to a float field, never "high".
    ("algorithm.lam", "high", "OmegaConf refuses it"),
])
def test_an_override_of_the_wrong_type_is_refused_before_any_gpu(base_specs, key, value, says):
    spec = _spec(base_specs, "qwen3-30b", verl={**base_specs["qwen3-30b"]["job"]["verl"], "overrides": {key: value}})
    with pytest.raises(BuildError, match=f"global.job.verl.overrides.{key}: ") as err:
        build(spec)
    assert says in str(err.value)


@pytest.mark.parametrize(("key", "value"), [
    (MEGATRON_LAYERS, 2), (MEGATRON_LAYERS, None), ("actor_rollout_ref.actor.ppo_epochs", 2),
    ("algorithm.lam", "0.95"),
    ("algorithm.lam", 1),
    # No type is declared for a key of an open map: any value goes on.
    ("actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space", "anything"),
])
def test_an_override_of_a_declared_type_goes_through(base_specs, key, value):
    spec = _spec(base_specs, "qwen3-30b", verl={**base_specs["qwen3-30b"]["job"]["verl"], "overrides": {key: value}})
    built = build(spec)
    assert any(a.key.lstrip("+") == key for a in built.args)
