"""GRPO904 vllm-server-gpus."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, values_section
from ._quantity import quantity

CODE = "GRPO904"
NAME = "vllm-server-gpus"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A vLLM server's tensor x pipeline x data parallel size is not the GPU count its container gets."
DOC = """## What it does
Finds every container that runs a vLLM OpenAI server (`vllm serve`, `vllm.entrypoints.openai.api_server`, or a
`vllm` image started with its own entrypoint; KubeRay pods run `ray start`, whatever their image), multiplies its
`--tensor-parallel-size` (`-tp`), `--pipeline-parallel-size` (`-pp`) and `--data-parallel-size` (`-dp`), each 1
when absent, and compares the product with the container's `nvidia.com/gpu` limit: more is an error, fewer a
warning (GPUs allocated and idle). Multi-node servers (`--nnodes`, `--headless`, `--data-parallel-size-local`,
the Ray executor) span several pods and are not compared. From a values file the chart renders both from
`vllm.tensorParallel`.

## Why is this bad?
vLLM starts one worker per GPU of that product; with fewer GPUs visible it fails after the image pull and the
node start (`World size (8) is larger than the number of available GPUs (4)`), and the Deployment crash-loops
until its startup budget is spent. With more GPUs than the product, the extra GPUs are held for the life of
the server and used by nothing (a default `--tensor-parallel-size 1` on an 8-GPU pod leaves seven idle).

## Example
```yaml
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.20.2
    args: [--model=/model, --tensor-parallel-size=8]
    resources:
      limits: {nvidia.com/gpu: 4}
```
Use instead:
```yaml
    args: [--model=/model, --tensor-parallel-size=4]
    resources:
      limits: {nvidia.com/gpu: 4}
```

## Fix
Give the container exactly tensor x pipeline x data parallel GPUs (`limits` and `requests`), or change the
parallel sizes to match its GPUs.
"""

FLAGS = {"--tensor-parallel-size": "tp", "-tp": "tp", "--pipeline-parallel-size": "pp", "-pp": "pp",
         "--data-parallel-size": "dp", "-dp": "dp"}
RAY_KINDS = ("RayCluster", "RayJob", "RayService")  # KubeRay runs `ray start` there, whatever the image
MULTI_NODE = ("--nnodes", "--headless", "--data-parallel-size-local", "--data-parallel-address")


def _tokens(items: object) -> list[str]:
    out: list[str] = []
    for item in items if isinstance(items, list) else []:
        text = str(item)
        if len(text) > SHLEX_MAX:  # shlex reads a character at a time in Python: a 1 MiB script took 30 s
            out += [_unquote(w) for w in SHELL_WORD.findall(text)]
            continue
        try:
            out += shlex.split(text)
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


def _is_vllm_server(c: dict, words: list[str]) -> bool:
    image = str(c.get("image", "")).rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    if any("vllm.entrypoints.openai" in w for w in words):
        return True
    if any(a.endswith("vllm") and b == "serve" for a, b in zip(words, words[1:], strict=False)):
        return True
    return "vllm" in image and not c.get("command")  # the image's own entrypoint is the server


def _sizes(words: list[str]) -> dict[str, int | None]:
    sizes: dict[str, int | None] = {"tp": 1, "pp": 1, "dp": 1}
    for i, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if flag in FLAGS:
            text = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            number = int(text) if text.isascii() and text.isdigit() and len(text) <= 6 else 0
            sizes[FLAGS[flag]] = number or None  # a variable, 0 or nonsense: vLLM decides, not this rule
    return sizes


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if o.is_test_hook or o.kind in RAY_KINDS:
            continue
        section = values_section(ctx, o, pod_path)
        for field, i, c in containers(pod):
            words = _tokens(c.get("command")) + _tokens(c.get("args"))
            if field != "containers" or not _is_vllm_server(c, words):
                continue
            if any(w.split("=")[0] in MULTI_NODE for w in words) or "--distributed-executor-backend=ray" in words \
                    or any(a == "--distributed-executor-backend" and b == "ray"
                           for a, b in zip(words, words[1:], strict=False)):
                continue
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
            requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
            gpu_count = quantity(limits.get("nvidia.com/gpu", requests.get("nvidia.com/gpu")))
            sizes = _sizes(words)
            if not gpu_count or None in sizes.values():
                continue  # a CPU server, or a size from a variable: unknown here
            gpus, world = int(gpu_count), sizes["tp"] * sizes["pp"] * sizes["dp"]
            if world == gpus:
                continue
            shown = " x ".join(f"{k} {v}" for k, v in sizes.items())
            where = dict(key_path="vllm.tensorParallel") if section == "vllm" else \
                dict(key_path=f"{pod_path}.{field}.{i}.resources", obj=o)
            who = f"{o.kind} {o.name}: vLLM server {c.get('name', i)}"
            if world > gpus:
                yield Hit(**where, message=f"{who} starts {shown} = {world} GPU workers with {gpus} GPU(s): it "
                          "fails at start, after the node and the image pull",
                          remediation=f"give the container {world} GPUs or lower the parallel sizes to {gpus}")
            else:
                yield Hit(**where, severity=Severity.WARNING,
                          message=f"{who} uses {shown} = {world} of its {gpus} GPUs; {gpus - world} stay idle "
                          "for the life of the server",
                          remediation=f"request {world} GPUs, or set --tensor-parallel-size so the product is {gpus}")
