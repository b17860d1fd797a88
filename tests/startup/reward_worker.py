"""Score samples through the reward function the way verl 0.9.1's reward loop does. Runs in the start-up venv.

stdin: {"config_name", "overrides": [...], "tokenizer": dir, "samples": [{"data_source", "prompt", "response",
        "ground_truth"}]}
stdout (last line): {"function": "module:name", "results": [{"reward_score", "reward_extra_info"} | {"error"}]}

The path is exactly verl's: Hydra compose of verl's packaged config with the command's overrides, then
`verl.trainer.ppo.reward.load_reward_manager(config, tokenizer)` (which imports the file named by
reward.custom_reward_function.path with verl's own loader), then the manager's `run_single` on a DataProto
holding the tokenised prompt and response, as the reward loop worker calls it.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")


def main() -> int:
    request = json.loads(sys.stdin.read())
    import numpy as np
    import torch
    import verl
    from hydra import compose, initialize_config_dir
    from transformers import AutoTokenizer
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name=request["config_name"], overrides=request["overrides"])
    tokenizer = AutoTokenizer.from_pretrained(request["tokenizer"])
    manager = load_reward_manager(cfg, tokenizer)
    # verl wraps the loaded function: partial(_call_with_kwargs, raw_fn, reward_kwargs).
    wrapped = manager.compute_score
    fn = wrapped.args[0] if getattr(wrapped, "args", None) else wrapped

    async def score_all():
        out = []
        for sample in request["samples"]:
            prompt = tokenizer(sample["prompt"], return_tensors="pt")["input_ids"][0]
            response = tokenizer(sample["response"], return_tensors="pt")["input_ids"][0]
            pad = 4  # right padding in the response, as the rollout leaves it
            responses = torch.cat([response, torch.full((pad,), tokenizer.pad_token_id)])
            mask = torch.cat([torch.ones(len(prompt) + len(response)), torch.zeros(pad)]).long()
            data = DataProto.from_dict(
                tensors={"prompts": prompt[None], "responses": responses[None], "attention_mask": mask[None]},
                non_tensors={
                    "data_source": np.array([sample["data_source"]], dtype=object),
                    "reward_model": np.array([{"style": "rule", "ground_truth": sample["ground_truth"]}],
                                             dtype=object),
                    "extra_info": np.array([{"split": "test", "index": 0}], dtype=object),
                },
            )
            try:
                out.append(await manager.run_single(data))
            except Exception as exc:  # noqa: BLE001 -- reported to the test, which decides
                out.append({"error": f"{type(exc).__name__}: {exc}"})
        return out

    # The manager captured its event loop at construction (verl.utils.ray_utils.get_event_loop); run on it.
    results = manager.loop.run_until_complete(score_all())
    print(json.dumps({"function": f"{fn.__code__.co_filename}:{fn.__name__}",
                      "manager": type(manager).__name__, "results": results}, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
