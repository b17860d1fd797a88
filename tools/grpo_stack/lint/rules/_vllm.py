"""vLLM servers in pod specs: the words of their command, and the parallel sizes they start with (not a rule: no
CODE). Shared by the rules that compare a server's workers with its GPUs (GRPO904) and its /dev/shm (GRPO617)."""

from __future__ import annotations

import re

from ..shell import split_words

FLAGS = {"--tensor-parallel-size": "tp", "-tp": "tp", "--pipeline-parallel-size": "pp", "-pp": "pp",
         "--data-parallel-size": "dp", "-dp": "dp"}
MULTI_NODE = ("--nnodes", "--headless", "--data-parallel-size-local", "--data-parallel-address")


def _tokens(items: object) -> list[str]:
    out: list[str] = []
    for item in items if isinstance(items, list) else []:
        text = str(item)
        if len(text) > SHLEX_MAX:  # shlex reads a character at a time in Python: a 1 MiB script took 30 s
            out += [_unquote(w) for w in SHELL_WORD.findall(text)]
            continue
        try:
            out += split_words(text)
        except ValueError:  # an unbalanced quote in a shell string: read it word by word
            out += text.split()
    return out


SHLEX_MAX = 64 * 1024
# A POSIX shell word (unquoted runs, '...' and "..." with backslash escapes), matched by the regex engine.
SHELL_WORD = re.compile(r"""(?:[^\s'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+""")
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""")


def _unquote(word: str) -> str:
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else
                       re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else m.group(3), word)


def is_vllm_server(c: dict, words: list[str]) -> bool:
    image = str(c.get("image", "")).rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    if any("vllm.entrypoints.openai" in w for w in words):
        return True
    if any(a.endswith("vllm") and b == "serve" for a, b in zip(words, words[1:], strict=False)):
        return True
    return "vllm" in image and not c.get("command")  # the image's own entrypoint is the server


def parallel_sizes(words: list[str]) -> dict[str, int | None]:
    sizes: dict[str, int | None] = {"tp": 1, "pp": 1, "dp": 1}
    for i, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if flag in FLAGS:
            text = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            number = int(text) if text.isascii() and text.isdigit() and len(text) <= 6 else 0
            sizes[FLAGS[flag]] = number or None  # a variable, 0 or nonsense: vLLM decides, not this rule
    return sizes


def argv_words(c: dict) -> list[str]:
    """The container's command and args as the shell words they are."""
    return _tokens(c.get("command")) + _tokens(c.get("args"))


def spans_nodes(words: list[str]) -> bool:
    """The server is one part of a multi-node deployment (Ray backend, headless data-parallel ranks)."""
    return any(w.split("=")[0] in MULTI_NODE for w in words) or "--distributed-executor-backend=ray" in words \
        or any(a == "--distributed-executor-backend" and b == "ray" for a, b in zip(words, words[1:], strict=False))


def single_worker(c: dict) -> bool:
    """A vLLM server on one node whose tensor x pipeline x data parallel product is stated and is 1: it drives one
    GPU, with no collective between GPUs, whatever the container holds."""
    words = argv_words(c)
    if not is_vllm_server(c, words) or spans_nodes(words) or not any(w.split("=")[0] in FLAGS for w in words):
        return False  # no size stated: the GPUs it holds say what the author meant to run
    sizes = parallel_sizes(words)
    return None not in sizes.values() and sizes["tp"] * sizes["pp"] * sizes["dp"] == 1
