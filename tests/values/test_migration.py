"""A values file in the previous layout gets one error per moved key, naming what to do instead (never a bare
"unknown key" or a silent acceptance): frameworkVersion is gone, LoRA off is `lora: null`, Megatron sizes do
not apply under FSDP, miles keys that reached nothing are refused."""

from __future__ import annotations

import pytest
from grpo_stack.render import merged_values
from grpo_stack.values import schema_violations

from tests.conftest import with_overrides

OLD = [
    ("qwen3-8b", {"global.job.frameworkVersion": "0.9.1"}, "global.job.frameworkVersion", "come from the image"),
    ("qwen3-8b", {"global.job.lora": {"rank": 0, "alpha": 16, "targetModules": "all-linear"}},
     "global.job.lora.rank", "set global.job.lora: null"),
    ("qwen3-8b", {"global.job.parallel.tensor": 1}, "global.job.parallel.tensor", "not used under backend fsdp"),
    ("qwen3-30b", {"global.job.parallel.ulysses": 1}, "global.job.parallel.ulysses", "use parallel.context"),
    ("miles-qwen3-4b", {"global.job.lora": {"rank": 8, "alpha": 16, "targetModules": "all-linear"}},
     "global.job.lora", "not used under framework miles"),
    ("miles-qwen3-4b", {"global.job.trainer.totalEpochs": 1}, "global.job.trainer.totalEpochs", "numRollout"),
    ("miles-qwen3-4b", {"global.job.rollout.maxModelLen": 4096}, "global.job.rollout.maxModelLen", "lengths"),
    ("miles-qwen3-4b", {"global.job.data.trainFiles": ["a.jsonl", "b.jsonl"]}, "global.job.data.trainFiles",
     "is too long"),
    ("qwen3-8b", {"global.job.reward.url": "http://x.example/score"}, "global.job.reward.url", "kind external"),
]


@pytest.mark.parametrize(("name", "change", "key", "says"), OLD, ids=[c[2] + "@" + c[0] for c in OLD])
def test_previous_layout_names_the_new_key(shipped_values, name, change, key, says):
    found = schema_violations(merged_values(with_overrides(shipped_values[name], change)))
    assert [v for v in found if v.key_path == key and says in v.message], found
