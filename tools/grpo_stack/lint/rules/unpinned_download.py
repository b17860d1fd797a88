"""GRPO871 unpinned-model-download."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, scripts

CODE = "GRPO871"
NAME = "unpinned-model-download"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A pod script downloads from the Hugging Face Hub without a fixed `--revision` (it tracks a branch)."
DOC = """## What it does
Reads every `huggingface-cli download` and `hf download` in pod scripts (`sh -c` entrypoints, probes, hooks) and
RayJob entrypoints. Each must pass `--revision` with a fixed revision (a commit or a release tag); no
`--revision`, or a branch (`main`, `master`), is reported.

## Why is this bad?
Without a revision the download follows the repository's default branch, which its owner may rewrite at any
time: two stagings of "the same" model or dataset differ, and nothing records which one a run trained on. The
predecessor's download scripts passed no revision.

## Example
```yaml
args: ["hf download Qwen/Qwen3-8B --local-dir /fsx/models/Qwen3-8B"]
```
Use instead:
```yaml
args: ["grpo-models stage Qwen/Qwen3-8B --revision <commit> --dest /fsx/models/Qwen3-8B"]
```

## Fix
Stage with `grpo-models stage MODEL --revision COMMIT --dest DIR` (the fsx-utils image has it: it verifies every
file against the Hub's hashes and records the commit), or pass `--revision <commit>` to `hf download`.
Not `huggingface-cli`: in huggingface_hub 1.x it is a stub that prints a deprecation notice and exits 1
without downloading (what the predecessor's README ran), and 2.4.0, which the fsx-utils image pins, installs
only `hf`.
"""

BRANCHES = frozenset({"main", "master"})


def _download_words(node) -> list[str] | None:
    name, words = command_name(node), command_words(node)
    if name in ("huggingface-cli", "hf") and words[:1] == ["download"]:
        return words[1:]
    return None


def _revision(words: list[str]) -> str | None:
    for i, raw in enumerate(words):
        word = raw.strip("'\"")
        if word.startswith("--revision="):
            return word.split("=", 1)[1].strip("'\"")
        if word == "--revision" and i + 1 < len(words):
            return words[i + 1].strip("'\"")
    return None


def check(ctx) -> Iterator[Hit]:
    for s in scripts(ctx):
        for node in commands_in(s.root):
            words = _download_words(node)
            if words is None:
                continue
            revision = _revision(words)
            if revision is None or revision in BRANCHES:
                what = f"the branch {revision!r}" if revision else "no --revision"
                yield Hit(s.path, f"{s.obj.kind} {s.obj.name}: {s.where} downloads from the Hub with {what} "
                          f"(script line {s.line_of(node)}); it gets whatever the branch holds that day", obj=s.obj)
