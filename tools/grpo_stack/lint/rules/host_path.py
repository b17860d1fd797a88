"""GRPO847 writable-host-path."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._cache_paths import download_mounts
from ._objects import containers, literal_env, pinned_to_node

CODE = "GRPO847"
NAME = "writable-host-path"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A container mounts a hostPath volume writable."
DOC = """## What it does
Reports every `hostPath` volume that a container of any pod template mounts without `readOnly: true`: an error where
the host path is a location the node, its runtime or every pod uses (`/`, `/etc`, `/var/lib/kubelet`, `/var/run`,
`/var/log`, `/tmp`, `/dev/shm`, a user's home, ...), a warning on a directory of the workload's own (`/opt/ollama`,
`/mnt/disks/models`), where a write changes no one else's files. A mount that holds the container's own model
download directory (its Hub cache, an Ollama store: a node-local model cache kept on purpose, so a restart or a
second server on the node skips the download) is not reported on a directory of the workload's own, and is a warning
in a node location: the design is common and deliberate (on the labelled corpora findings on node-local model caches
were judged deliberate 22 times and a defect once). Nor is a directory of the workload's own in a pod pinned to one
named node (`nodeName`, a `kubernetes.io/hostname` node selector): there the directory is the pod's storage, as a
local PersistentVolume would be, and no other node's pod reads it. Not reported: a DaemonSet's node agent writing
where the kubelet's plugin APIs make it write (its device-plugin and plugin-registration directories,
`/var/lib/kubelet/device-plugins`, `/var/lib/kubelet/plugins`, `/var/lib/kubelet/plugins_registry`, and
node-feature-discovery's `features.d`), and a privileged container of any workload, which owns the node with or
without the mount (GRPO815 and Pod Security judge the privilege: a GPU networking daemon that mounts `/sys` beside a
training job is one), and a host device directory (`/dev` itself or one under it other than `/dev/shm`:
`/dev/infiniband` for RDMA; opening its devices is what the mount is for). Nor is a node-installed driver directory
(GKE's `/home/kubernetes/bin`, which Google's GPU and gIB manifests mount writable at `/usr/local/nvidia` and
`/usr/local/gib`): the vendor's documented mount, which its containers only read (on the labelled corpora such
warnings were never a defect), nor the CUDA MPS daemon's pipe and log directories (`/run/nvidia/mps/...`,
`/tmp/nvidia-mps`, `/var/log/nvidia-mps`, or where the container's `CUDA_MPS_PIPE_DIRECTORY` /
`CUDA_MPS_LOG_DIRECTORY` points): an MPS client must write to the daemon's pipes. Other node agents' writes belong
to DaemonSets that manage the node; suppress with the reason there.

## Why is this bad?
A writable host directory lets the pod change the node: other pods' data, container runtime state, kubelet files. On
shared GPU nodes that is one bad rollout or one model-written program away from a node-wide incident, and it
survives the pod.

## Example
```yaml
volumes:
  - name: cache
    hostPath: {path: /var/cache/models}
containers:
  - volumeMounts:
      - {name: cache, mountPath: /cache}
```
Use instead:
```yaml
volumes:
  - name: cache
    emptyDir: {}
```

## Fix
Use an emptyDir, a PVC, or mount the host path `readOnly: true`.
"""


# Directories the kubelet's device-plugin and CSI registration APIs (and node-feature-discovery's local feature
# source) have node agents write into.
NODE_AGENT_DIRS = ("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry",
                   "/etc/kubernetes/node-feature-discovery/features.d")


def _node_agent_write(o, c: dict, path: str | None) -> bool:
    """A write the container may make anyway: a privileged container (any workload's) owns the node with or
    without the mount, and a DaemonSet's agent writes where the kubelet's plugin APIs have it write."""
    if ((c.get("securityContext") or {}) if isinstance(c.get("securityContext"), dict) else {}).get("privileged"):
        return True
    if o.kind != "DaemonSet":
        return False
    p = str(path or "").rstrip("/")
    return any(p == d or p.startswith(d + "/") for d in NODE_AGENT_DIRS)


# Node-installed driver directories a GPU pod mounts as its vendor documents it (GKE installs the NVIDIA driver
# and the gIB RDMA plugin under /home/kubernetes/bin and mounts them at /usr/local/nvidia, /usr/local/gib).
DRIVER_DIRS = ("/home/kubernetes/bin",)


# The CUDA MPS control daemon's pipe and log directories (the NVIDIA device plugin's MPS sharing keeps them under
# /run/nvidia/mps; a standalone daemon uses CUDA's defaults, /tmp/nvidia-mps and /var/log/nvidia-mps): an MPS client
# must mount them writable to reach the daemon through its named pipes.
MPS_DIRS = ("/run/nvidia/mps", "/tmp/nvidia-mps", "/var/log/nvidia-mps")
MPS_ENV = ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY")


def _mps_dir(c: dict, mount: dict, path: str | None) -> bool:
    """The mount is the MPS daemon's pipe or log directory: the host path is one of MPS_DIRS, or the container's env
    points the MPS client at the mount (`CUDA_MPS_PIPE_DIRECTORY: /mps/pipe`)."""
    if _under(path, MPS_DIRS):
        return True
    env = literal_env(c)
    target = str(mount.get("mountPath") or "").rstrip("/")
    return any(str(env.get(name) or "").rstrip("/") == target and target for name in MPS_ENV)


def _under(path: str | None, dirs: tuple[str, ...]) -> bool:
    p = str(path or "").rstrip("/")
    return any(p == d or p.startswith(d + "/") for d in dirs)


def _device_dir(path: str | None) -> bool:
    """A host device directory (`/dev` itself, a node agent reaching its GPUs; `/dev/infiniband`, `/dev/fuse`):
    opening its devices is what the mount is for, and device access is the privilege rules' question. `/dev/shm` is a
    shared tree, not a device."""
    p = str(path or "").rstrip("/")
    return (p == "/dev" or p.startswith("/dev/")) and not _under(p, ("/dev/shm",))


# Host locations the node itself, its runtime or every pod uses: a write there changes the node or another pod.
NODE_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/root", "/proc", "/sys", "/run", "/var/run",
             "/var/log", "/var/lib/kubelet", "/var/lib/docker", "/var/lib/containerd", "/var/lib/cni", "/opt/cni",
             "/tmp", "/dev/shm")
NODE_ROOTS = frozenset({"/", "/var", "/var/lib", "/opt", "/mnt", "/srv", "/data", "/home"})


def _node_location(path: str | None) -> bool:
    """A location the node or every pod uses (NODE_DIRS, a root such as / or /var/lib, a user's home); anything
    else (`/opt/ollama`, `/mnt/disks/models`, `/var/lib/llm-cache`) is a directory of the workload's own."""
    p = str(path or "").rstrip("/") or "/"
    return p in NODE_ROOTS or _under(p, NODE_DIRS) or (p.startswith("/home/") and p.count("/") == 2)


def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        host = {v.get("name"): (v.get("hostPath") or {}).get("path") for v in pod.get("volumes") or []
                if isinstance(v, dict) and "hostPath" in v}
        if not host:
            continue
        pinned = pinned_to_node(pod)
        for field, i, c in containers(pod):
            caches = download_mounts(c)
            for j, m in enumerate(c.get("volumeMounts") or []):
                if (isinstance(m, dict) and m.get("name") in host and not m.get("readOnly")
                        and not _node_agent_write(o, c, host[m["name"]]) and not _device_dir(host[m["name"]])
                        and not _under(host[m["name"]], DRIVER_DIRS) and not _mps_dir(c, m, host[m["name"]])):
                    if j in caches and not _node_location(host[m["name"]]):
                        continue  # a node-local model cache kept on purpose
                    if pinned and not _node_location(host[m["name"]]):
                        continue  # the storage of a pod that runs on one named node, as a local volume would be
                    why_warn = _warning(j in caches, host[m["name"]])
                    yield Hit(f"{pod_path}.{field}.{i}.volumeMounts.{j}", f"{o.kind} {o.name}: container "
                              f"{c.get('name', i)} mounts host path {host[m['name']]} writable at "
                              f"{m.get('mountPath')}" + (f" ({why_warn})" if why_warn else ""),
                              obj=o, severity=Severity.WARNING if why_warn else None)


def _warning(cache: bool, path: str | None) -> str | None:
    """Why a writable mount of `path` is only a warning (the container's own model cache, the node's driver, a
    directory of the workload's own), or None where it is an error."""
    if cache:
        return "a node-local model cache: every pod that mounts it loads what this one writes"
    if not _node_location(path):
        return ("a directory of the workload's own on the node, not one the node or other pods use: every pod "
                "scheduled there reads what this one writes")
    return None
