"""The docs gate validates the arguments of commands run in a pod, not only their flag names.

The reviewed quickstart passed the model's destination as an extra positional to a downloader that takes none
(argparse: "unrecognized arguments", exit 2), inside a remote-execution wrapper. Each case below is a command
as the docs or NOTES could print it; the gate must refuse the broken ones with the tool's own parser. Where the
check stops: parsing (tests/docs/parse_only.py), not what the command then does in the pod.
"""

from __future__ import annotations

import pytest

from tests.docs.commands import Command
from tests.docs.test_documented_commands import verify

EXEC = "kubectl -n grpo exec deploy/grpo-fsx-utils --"
BROKEN = [
    # the seed's form: the destination as an extra positional
    f"{EXEC} grpo-models stage Qwen/Qwen3-8B /fsx/models/Qwen3-8B",
    # variants: another tool and subcommand, a missing required option, a wrong subcommand, a bad choice,
    # and the same mistake outside a pod
    f"{EXEC} grpo-data prepare --dataset gsm8k --seed 0 /fsx/data/gsm8k/train.parquet",
    f"{EXEC} grpo-data holdout --dataset gsm8k --output /fsx/data/gsm8k/test.parquet",
    f"{EXEC} grpo-models download Qwen/Qwen3-8B",
    "grpo-models verify /fsx/models/Qwen3-8B /fsx/models/Qwen3-8B-copy",
]
WORKING = [
    f"{EXEC} grpo-models stage Qwen/Qwen3-8B --revision b968826d9c46dd6066d109eabc6255188de91218 "
    "--dest /fsx/models/Qwen3-8B",
    f"{EXEC} grpo-data prepare --dataset gsm8k --seed 0 --output /fsx/data/gsm8k/train.parquet",
]


@pytest.mark.parametrize("text", BROKEN)
def test_wrong_arguments_in_a_pod_fail_the_gate(text, tmp_path):
    with pytest.raises(AssertionError, match="refuses its arguments"):
        verify(Command("docs/example.md:1", text, "values/qwen3-8b.yaml"), tmp_path)


@pytest.mark.parametrize("text", WORKING)
def test_right_arguments_pass_the_gate(text, tmp_path):
    assert "arguments parsed by the installed" in verify(Command("docs/example.md:1", text, "values/qwen3-8b.yaml"),
                                                         tmp_path)
