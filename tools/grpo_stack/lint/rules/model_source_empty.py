"""GRPO866 model-source-empty."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import script_in
from ._cache_paths import mount_at
from ._objects import argv_of, containers

CODE = "GRPO866"
NAME = "model-source-empty"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A server loads its models from an emptyDir that nothing in the pod fills: it starts with no model.")
DOC = """## What it does
Reads the flags by which a container's command names where its models are (`--model-repository` and
`--model-store`, Triton's and TorchServe's, `--model-dir`, `--model-path`, `--model`, `--model-id`) and, when that
path is on an `emptyDir` volume, checks whether anything else puts files there: an init container or another
container of the pod that mounts the same volume. Reported only when the container's own `command` starts the
server directly (not a shell script, which may download into the path first, and not the image's entrypoint,
which `args` alone leave in place and which may do the same).

## Why is this bad?
An `emptyDir` starts empty with every pod. A model server pointed at one that no other container writes finds no
model: Triton starts with an empty repository and serves nothing, a server that takes one model path fails at
start and restarts for ever. A comment that "an initContainer downloads the models" does not make one.

## Example
```yaml
containers:
  - name: server
    command: [tritonserver, --model-repository=/models]
    volumeMounts: [{name: models, mountPath: /models}]
volumes:
  - {name: models, emptyDir: {}}
```
Use instead:
```yaml
initContainers:
  - name: fetch
    command: [aws, s3, sync, s3://models/detector/, /models/]
    volumeMounts: [{name: models, mountPath: /models}]
```

## Fix
Fill the volume before the server starts (an init container that downloads or copies the models into it), or
mount the models from persistent storage (a PersistentVolumeClaim, an image volume).
"""

MODEL_FLAGS = frozenset({"--model-repository", "--model-store", "--model-dir", "--model-path", "--model",
                         "--model-id"})


def _model_paths(words: list[str]) -> Iterator[tuple[str, str]]:
    for i, w in enumerate(words):
        flag, eq, value = w.partition("=")
        if flag not in MODEL_FLAGS:
            continue
        value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
        if value.startswith("/"):
            yield flag, value


def _mounts(c: dict, volume: str) -> bool:
    return any(isinstance(m, dict) and m.get("name") == volume for m in c.get("volumeMounts") or [])


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        every = list(containers(pod))
        for field, i, c in every:
            if field != "containers" or not c.get("command"):
                continue
            words = argv_of(c)
            if not words or script_in(words) is not None:
                continue
            for flag, path in _model_paths(words):
                mount = mount_at(c, path)
                name = mount.get("name") if mount else None
                volume = volumes.get(name) if name else None
                if not isinstance(volume, dict) or "emptyDir" not in volume:
                    continue
                if any(_mounts(other, name) for f, j, other in every if (f, j) != (field, i)):
                    continue  # an init container or a sidecar may fill it
                program = posixpath.basename(words[0])
                yield Hit(f"{pod_path}.{field}.{i}", f"{o.kind} {o.name}: container {c.get('name', i)} runs {program} "
                          f"with {flag} {path}, on emptyDir {name}, which no other container of the pod mounts: "
                          "nothing puts a model there, and the server starts with none", obj=o)
                break
