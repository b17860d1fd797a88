"""job.verl.overrides are typed by what verl 0.9.1 declares (grpo_stack.catalog.verl_keys.type_refusal), and verl
itself agrees, asked in the oracle venv (tests/oracle/verl_types_oracle_worker.py):

- keys of sections OmegaConf can structure: for every such key and a fixed set of probe values (numbers, numeric
  and non-numeric strings, `1e309`, a zero-width space, bools, null, lists), the builder refuses exactly what
  OmegaConf's structured merge of the key's dataclass refuses (verl's omega_conf_to_dataclass with a type), apart
  from list elements, which the builder does not type (a list of the wrong elements is a miss, never a false
  error);
- keys verl builds from the values as given (hydra's instantiate): a value of another type reaches the built
  config unchanged or verl refuses it; never does verl convert or replace it (where it does, the key is not typed).

Where it stops: keys under `megatron.override_transformer_config` are typed by megatron-core's TransformerConfig
declaration, which Megatron does not check when it is built; a wrong type there fails inside Megatron, after the
GPUs are allocated, which this tier does not reach.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from grpo_stack.catalog import verl_keys
from grpo_stack.catalog.extract_verl_keys import BUILD_OVERRIDES

from tests.job.cases import require_oracle
from tests.oracle.client import HERE

WORKER = HERE / "verl_types_oracle_worker.py"
PROBES = [0, 3, -1, 2.0, 2.5, "3", "2.5", "1e309", "\u200b", "", "abc", "yes", "true", True, False, None, [1],
          ["a"]]


def ask(config_name: str) -> dict:
    client = require_oracle()
    config = verl_keys.catalogue()["configs"][config_name]
    request = {"config_name": config_name, "build_overrides": list(BUILD_OVERRIDES),
               "converted": list(config["field_types"]), "as_given": config["field_types_as_given"],
               "probes": PROBES}
    proc = subprocess.run([str(client.oracle_python()), str(WORKER)], input=json.dumps(request), capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.oracle
@pytest.mark.parametrize("config_name", ["ppo_trainer", "ppo_megatron_trainer"])
def test_the_builder_refuses_what_verl_refuses(config_name):
    answers = ask(config_name)
    false_errors, misses = [], []
    for key, verdicts in answers["converted"].items():
        for value, verl_takes in zip(PROBES, verdicts, strict=True):
            ours = verl_keys.type_refusal(config_name, key, value) is None
            if verl_takes and not ours:
                false_errors.append((key, value))
            elif ours and not verl_takes and not isinstance(value, list):
                misses.append((key, value))
    assert len(answers["converted"]) > 300
    assert false_errors == [], false_errors[:20]
    assert misses == [], misses[:20]
    replaced = {k: v for k, v in answers["as_given"].items() if not (v == "as given" or v.startswith("refused"))}
    assert len(answers["as_given"]) > 80
    assert replaced == {}
