"""GRPO627 read-only-model-cache."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import config_map_data
from ._cache_paths import downloads, mount_index, offline

CODE = "GRPO627"
NAME = "read-only-model-cache"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A container downloads a model from the Hugging Face Hub into a cache on a read-only volume: the "
           "download fails with EROFS at start.")
DOC = """## What it does
For every container that pulls a model from the Hugging Face Hub when it starts (a server started with a hub id:
`--model ORG/NAME`, `vllm serve ORG/NAME`, a server image's entrypoint given `ORG/NAME` as its first argument,
`--model-path`, TGI's `MODEL_ID`; `hf download`, `snapshot_download` /
`from_pretrained`, a Trainer initializer's `STORAGE_URI=hf://...`; in command, args, env or an `sh -c` script),
finds where the download lands, as GRPO626 does (`--download-dir` / `--local-dir`, `HF_HUB_CACHE`,
`TRANSFORMERS_CACHE`, `HF_HOME/hub`, else `$HOME/.cache/huggingface/hub`), and the volume mounted there. It is
reported when that volume is read-only to the container:

- the volumeMount says `readOnly: true` (or `recursiveReadOnly`);
- the pod's volume says `readOnly: true` (`persistentVolumeClaim.readOnly`, CSI, NFS and the other sources that
  take it);
- the volume is a `configMap`, `secret`, `projected`, `downwardAPI` or `image` volume (always read-only);
- the claim (a PersistentVolumeClaim in the same manifests, a StatefulSet `volumeClaimTemplates` entry or an
  ephemeral volume's claim template) has only the `ReadOnlyMany` access mode.

Not reported: a container with `HF_HUB_OFFLINE` or `TRANSFORMERS_OFFLINE` set true, in its `env` or in a
ConfigMap of the same manifests that its `envFrom` loads (it only reads a cache filled beforehand), a local model
path (no pull), and a read-only mount anywhere but the cache path.

## Why is this bad?
huggingface_hub writes into the cache before it returns a file: a `.locks/` lock file, the blob under a temporary
name, the `refs/` pointer and the `snapshots/` symlinks; vLLM takes a file lock in its `--download-dir`. On a
read-only volume the first of these writes fails with `OSError: [Errno 30] Read-only file system`, the server
exits before it loads anything, and the pod restarts into CrashLoopBackOff. It does so even when the weights are
already there, unless the hub client is told to stay offline.

## Example
```yaml
containers:
  - name: vllm
    args: [--model, Qwen/Qwen3-8B, --revision, 9c925d64d72725edaf899c6cb9c377fd0709d9c5]
    volumeMounts: [{name: hf-cache, mountPath: /root/.cache/huggingface, readOnly: true}]
```
Use instead (a cache filled beforehand, read offline):
```yaml
containers:
  - name: vllm
    args: [--model, Qwen/Qwen3-8B, --revision, 9c925d64d72725edaf899c6cb9c377fd0709d9c5]
    env: [{name: HF_HUB_OFFLINE, value: "1"}]
    volumeMounts: [{name: hf-cache, mountPath: /root/.cache/huggingface, readOnly: true}]
```

## Fix
Set `HF_HUB_OFFLINE=1` where a read-only cache is filled beforehand (by an init step or a staging Job that mounts
it writable), or mount the cache writable (drop `readOnly`, use a `ReadWriteMany` claim) where the container
is meant to download.
"""

# Volume sources the kubelet always mounts read-only.
ALWAYS_READ_ONLY = ("configMap", "secret", "projected", "downwardAPI", "image")
def _read_only_modes(spec) -> bool:
    modes = (spec or {}).get("accessModes") if isinstance(spec, dict) else None
    return bool(modes) and isinstance(modes, list) and all(m == "ReadOnlyMany" for m in modes)


def _why_read_only(mount: dict, volume: dict | None, claims: dict[str, dict], templates: dict[str, dict]) -> str | None:
    """Why the mounted volume is read-only to the container, or None where it is writable (or not known)."""
    name = mount.get("name")
    if mount.get("readOnly") is True or mount.get("recursiveReadOnly") in ("Enabled", "IfPossible"):
        return f"volumeMount {name} is readOnly"
    if volume is None:  # a StatefulSet volumeClaimTemplate (or a volume the pod lacks: the schema's finding)
        return f"claim template {name} is ReadOnlyMany only" if _read_only_modes(templates.get(name)) else None
    for source in ALWAYS_READ_ONLY:
        if source in volume:
            return f"volume {name} is a {source} volume (always read-only)"
    for source, spec in volume.items():
        if isinstance(spec, dict) and spec.get("readOnly") is True:
            return f"volume {name} mounts its {source} readOnly"
    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName") \
        if isinstance(volume.get("persistentVolumeClaim"), dict) else None
    if claim in claims and _read_only_modes(claims[claim]):
        return f"claim {claim} is ReadOnlyMany only"
    ephemeral = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}) \
        if isinstance(volume.get("ephemeral"), dict) else {}
    if isinstance(ephemeral, dict) and _read_only_modes(ephemeral.get("spec")):
        return f"ephemeral volume {name} is ReadOnlyMany only"
    return None


def _claim_templates(o, pod_path: str) -> dict[str, dict]:
    if o.kind != "StatefulSet" or pod_path != "spec.template.spec":
        return {}
    items = (o.obj.get("spec") or {}).get("volumeClaimTemplates") or []
    return {str((t.get("metadata") or {}).get("name")): t.get("spec") or {} for t in items if isinstance(t, dict)}


def check(ctx) -> Iterator[Hit]:
    claims = {c.name: (c.obj.get("spec") or {}) for c in ctx.of_kind("PersistentVolumeClaim")}
    config_maps = config_map_data(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)}
        templates = _claim_templates(o, pod_path)
        for base, c, pulls, cache, env in downloads(pod, pod_path, config_maps=config_maps):
            j = mount_index(c, cache)
            if j is None or offline(env):
                continue
            mount = c["volumeMounts"][j]
            why = _why_read_only(mount, volumes.get(mount.get("name")), claims, templates)
            if why is None:
                continue
            pull = pulls[0]
            how = pull.how.split()[-1] if pull.how.startswith("-") else pull.how
            name = c.get("name", base.rsplit(".", 1)[-1])
            yield Hit(f"{base}.volumeMounts.{j}",
                      f"{o.kind} {o.name}: container {name} downloads {pull.repo} ({how}) to {cache}, but {why}: "
                      "the hub client's first write there fails with EROFS (Read-only file system) and the "
                      "container exits at start; set HF_HUB_OFFLINE=1 if the cache is filled beforehand, or mount "
                      "it writable", obj=o)
