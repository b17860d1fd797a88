"""GRPO904 vllm-server-gpus."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import containers, values_section
from ._quantity import quantity
from ._vllm import argv_words, is_vllm_server, parallel_sizes, spans_nodes

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

RAY_KINDS = ("RayCluster", "RayJob", "RayService")  # KubeRay runs `ray start` there, whatever the image


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if o.is_test_hook or o.kind in RAY_KINDS:
            continue
        section = values_section(ctx, o, pod_path)
        for field, i, c in containers(pod):
            words = argv_words(c)
            if field != "containers" or not is_vllm_server(c, words) or spans_nodes(words):
                continue
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
            requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
            gpu_count = quantity(limits.get("nvidia.com/gpu", requests.get("nvidia.com/gpu")))
            sizes = parallel_sizes(words)
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
