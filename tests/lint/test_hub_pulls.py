"""The hub pulls GRPO871 reads, spelling by spelling: each form a model server, CLI or library takes, and the
look-alikes that pull nothing (local paths, served names, API model names)."""

from __future__ import annotations

import pytest
from grpo_stack.lint.rules._hub import argv_pulls, python_pulls, uri_pulls

PULLS = [
    (["vllm", "serve", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["vllm", "serve", "--port", "8000", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model=Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["text-generation-launcher", "--model-id", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["lmdeploy", "serve", "api_server", "internlm/internlm2_5-7b-chat"], "internlm/internlm2_5-7b-chat"),
    (["python", "-m", "kserve_huggingfaceserver", "--model_id=Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["torchrun", "sft.py", "--model_name_or_path", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["vllm", "serve", "/models/x", "--tokenizer", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["vllm", "serve", "openai/gpt-oss-20b"], "openai/gpt-oss-20b"),
    (["hf", "download", "open-r1/codeforces", "--repo-type", "dataset"], "open-r1/codeforces"),
    (["git", "clone", "https://huggingface.co/datasets/openai/gsm8k"], "datasets/openai/gsm8k"),
]


@pytest.mark.parametrize(("argv", "repo"), PULLS, ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_each_spelling_is_a_pull_and_a_revision_pins_it(argv, repo):
    pulls = list(argv_pulls(argv, {}))
    assert [p.repo for p in pulls] == [repo] and not pulls[0].pinned
    pinned = list(argv_pulls([*argv, "--revision", "0e9e39f249a16976918f6564b8830bc894c89659"], {}))
    assert pinned and all(p.pinned for p in pinned)
    assert not any(p.pinned for p in argv_pulls([*argv, "--revision=main"], {}))


@pytest.mark.parametrize("argv", [
    ["vllm", "serve", "/models/Qwen3-8B", "--served-model-name", "Qwen/Qwen3-8B"],
    ["vllm", "serve", "./ckpt/step-100"],
    ["python", "eval.py", "--model", "models/Qwen3-8B"],
    ["python", "eval.py", "--model", "openai/gpt-4o"],
    ["lm_eval", "--model", "hf", "--tasks", "gsm8k"],
    ["vllm", "serve", "$(MODEL)"],
])
def test_look_alikes_pull_nothing(argv):
    assert list(argv_pulls(argv, {})) == []


def test_env_references_are_read_from_the_container_env():
    pulls = list(argv_pulls(["vllm", "serve", "$(MODEL)", "--revision", "${REV}"],
                            {"MODEL": "Qwen/Qwen3-8B", "REV": "b968826d9c46dd6066d109eabc6255188de91218"}))
    assert [(p.repo, p.pinned) for p in pulls] == [("Qwen/Qwen3-8B", True)]


@pytest.mark.parametrize(("source", "pinned"), [
    ("snapshot_download('Qwen/Qwen3-8B', local_dir='/d')", False),
    ("snapshot_download(repo_id=name)", False),
    ("snapshot_download('Qwen/Qwen3-8B', revision='b968826d9c46dd6066d109eabc6255188de91218')", True),
    ("AutoModelForCausalLM.from_pretrained(\"Qwen/Qwen3-8B\", torch_dtype='auto')", False),
    ("load_dataset('openai/gsm8k', 'main', revision='e53f048856ff4f594e959d75785d2c2d37b678ee')", True),
])
def test_python_calls(source, pinned):
    pulls = [p for _off, p in python_pulls(source)]
    assert len(pulls) == 1 and pulls[0].pinned is pinned


def test_python_calls_on_local_paths_or_variables_pull_nothing():
    assert list(python_pulls("AutoModel.from_pretrained('/data/model'); AutoModel.from_pretrained(path)")) == []


@pytest.mark.parametrize(("uri", "pinned"), [
    ("hf://Qwen/Qwen2.5-0.5B", False), ("hf://Qwen/Qwen2.5-0.5B:7ae5576", True),
    ("hf://datasets/openai/gsm8k@e53f048", True), ("hf://datasets/openai/gsm8k", False),
])
def test_hf_uris(uri, pinned):
    pulls = list(uri_pulls(uri))
    assert len(pulls) == 1 and pulls[0].pinned is pinned
