"""Where a container's Hugging Face Hub downloads land, and the volumeMount that holds that path (not a rule: no
CODE). Shared by the rules that judge the volume under a model cache (GRPO626, GRPO627)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ..shell import assigned, command_name, command_words, commands_in, parse, script_in
from ._hub import (
    HUB_GIT,
    Pull,
    argv_pulls,
    flag_value,
    hub_repo,
    llama_env_pull,
    llama_hub_pull,
    python_pulls,
    resolve,
    uri_pulls,
)
from ._object_store import copy_destinations
from ._objects import argv_of, containers, literal_env
from ._ollama import pod_ollama_pulls
from ._serving import is_model_server, is_ollama
from ._vllm import argv_words, is_vllm_server

CACHE_ENV = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE")
DOWNLOAD_FLAGS = ("--download-dir", "--download_dir", "--local-dir", "--local_dir", "--cache-dir", "--cache_dir",
                  "--huggingface-hub-cache")
PY_TARGET = re.compile(r"\b(?:local_dir|cache_dir)\s*=\s*(['\"])(/[^'\"]+)\1")
PY_TARGET_NAME = re.compile(r"\b(?:local_dir|cache_dir)\s*=\s*([A-Za-z_]\w*)\s*[,)]")
MODEL_ENV = ("MODEL_ID", "HF_MODEL_ID")
TGI = ("text-generation-inference", "text-generation-launcher", "huggingface-pytorch-tgi")
# Kubeflow Trainer's model and dataset initializers download `STORAGE_URI` (hf://...) into /workspace/model and
# /workspace/dataset; an hf:// URI elsewhere names no download directory these rules can read.
INITIALIZER_DIR = "/workspace"


def is_tgi(c: dict, argv: list[str]) -> bool:
    image = str(c.get("image", ""))
    return any(t in image for t in TGI) or any(posixpath.basename(w) == "text-generation-launcher" for w in argv[:1])


def start_pulls(c: dict, argv: list[str], env: dict[str, str]) -> list[Pull]:
    """Every pull into the Hub's cache (or a download directory) the container makes at start, in the spellings `_hub`
    reads; a file fetched by its URL lands where the fetcher writes it and is not one."""
    found: list[Pull] = []
    script = script_in(argv)
    if script is None:
        found += argv_pulls(argv, env)
        found += [p for word in argv for _off, p in python_pulls(word)]
    else:
        source = resolve(str(argv[script[0]]), env) if script[0] < len(argv) else ""
        found += script_argv_pulls(source, env)
        found += [p for _off, p in python_pulls(source)]
    found += entrypoint_pulls(c)
    for var in MODEL_ENV:
        if env.get(var) and hub_repo(env[var]) and (var != "MODEL_ID" or is_tgi(c, argv)):
            found.append(Pull(env[var], f"env {var}", None))
    llama = llama_env_pull(env)
    if llama:
        found.append(llama)
    return [p for p in found if not p.fetched]


def script_argv_pulls(source: str, env: dict[str, str]) -> list[Pull]:
    """The pulls a shell script's command lines make, its own literal variables expanded in them
    (`MODEL=org/name; vllm serve "$MODEL"`)."""
    root = parse(source).root_node
    words_env = {**env, **assigned(root)}
    return [p for node in commands_in(root) for p in argv_pulls([command_name(node), *command_words(node)], words_env)]


def entrypoint_pulls(c: dict) -> list[Pull]:
    """A model server image's own entrypoint given the model as its first argument (`args: [ORG/NAME, --port,
    ...]` to an image whose entrypoint is `vllm serve`): the server pulls it when it starts."""
    command = c.get("command") if isinstance(c.get("command"), list) else []
    args = c.get("args") if isinstance(c.get("args"), list) else []
    if command or not args or not is_model_server(c):
        return []
    first = str(args[0]).strip("'\"")
    if first.startswith("-") or not hub_repo(first):
        return []
    words = [str(a) for a in args]
    at = next((i for i, w in enumerate(words) if w.partition("=")[0] == "--revision"), None)
    revision = None if at is None else (words[at].partition("=")[2] or (words[at + 1] if at + 1 < len(words) else ""))
    return [Pull(first, "the image's server, its first argument", revision or None)]


def _clone_target(c: dict, argv: list[str]) -> str | None:
    """The directory a `git clone https://huggingface.co/<repo>` of the container writes: its explicit target, else
    the repository's name under the directory the script `cd`s into (or the container's workingDir)."""
    script = script_in(argv)
    commands = [[command_name(n), *command_words(n)] for n in commands_in(parse(argv[script[0]]).root_node)] \
        if script is not None and script[0] < len(argv) else [argv]
    cwd = str(c.get("workingDir") or "")
    for words in commands:
        if words[:1] == ["cd"] and len(words) > 1 and words[1].startswith("/"):
            cwd = words[1]
        if words[:1] == ["git"] and "clone" in words[1:3]:
            url = next((w for w in words if HUB_GIT.match(w)), None)
            if url is None:
                continue
            rest = [w for w in words[words.index(url) + 1:] if not w.startswith("-")]
            target = rest[0] if rest else posixpath.basename(url.rstrip("/")).removesuffix(".git")
            return target if target.startswith("/") else posixpath.join(cwd, target) if cwd else None
    return None


def _unquoted(word: str) -> str:
    """A shell word without the quotes around it (`--local-dir "/models/x"` downloads to /models/x)."""
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"" else word


def cache_dir(c: dict, argv: list[str], env: dict[str, str]) -> str:
    """Where the container's hub downloads land, as huggingface_hub and the servers resolve it (a `git clone` of
    a Hub repository: where the clone goes)."""
    clone = _clone_target(c, argv)
    if clone:
        return clone
    flag = flag_value(argv, DOWNLOAD_FLAGS)
    if flag:
        return resolve(_unquoted(flag), env)
    words = [w for w in argv if "=" in w]
    if script_in(argv) is not None:  # `sh -c 'hf download ... --local-dir /models'`
        words = [w for w in argv if " " in w]
        for w in words:
            for node in commands_in(parse(w).root_node):
                found = flag_value(command_words(node), DOWNLOAD_FLAGS)
                if found:
                    return resolve(_unquoted(found), env)
    for w in words:
        target = _py_target(w)
        if target:
            return target
    llama = _llama_cache(argv, env)
    if llama:
        return llama
    for var in CACHE_ENV:
        if env.get(var):
            return env[var]
    if env.get("HF_HOME"):
        return posixpath.join(env["HF_HOME"], "hub")
    if is_tgi(c, argv):
        return "/data/hub"  # TGI's image: ENV HF_HOME=/data
    if env.get("XDG_CACHE_HOME"):
        return posixpath.join(env["XDG_CACHE_HOME"], "huggingface", "hub")
    return posixpath.join(env.get("HOME", "/root"), ".cache", "huggingface", "hub")


def _llama_cache(argv: list[str], env: dict[str, str]) -> str | None:
    """Where llama.cpp keeps what `--hf-repo` downloads, when the container's command (or its script) uses it:
    `LLAMA_CACHE`, else `XDG_CACHE_HOME/llama.cpp`, else `$HOME/.cache/llama.cpp` (common.cpp
    fs_get_cache_directory)."""
    words = list(argv)
    script = script_in(argv)
    if script is not None and script[0] < len(argv):
        source = parse(resolve(argv[script[0]], env)).root_node
        words += [w for node in commands_in(source) for w in command_words(node)]
    if not llama_hub_pull(words, env):
        return None
    if env.get("LLAMA_CACHE"):
        return env["LLAMA_CACHE"]
    return posixpath.join(env.get("XDG_CACHE_HOME") or posixpath.join(env.get("HOME", "/root"), ".cache"), "llama.cpp")


def _py_target(text: str) -> str | None:
    """The absolute path a Python snippet downloads to: `local_dir='/models/x'`, or `local_dir=path` where the snippet
    assigns `path = '/models/x'` itself."""
    m = PY_TARGET.search(text)
    if m:
        return m.group(2)
    named = PY_TARGET_NAME.search(text)
    if named:
        value = re.search(rf"\b{re.escape(named.group(1))}\s*=\s*(['\"])(/[^'\"]+)\1", text)
        if value:
            return value.group(2)
    return None


def ollama_models_dir(c: dict, env: dict[str, str]) -> str | None:
    """Where an Ollama server keeps the models it pulls (OLLAMA_MODELS, else ~/.ollama/models), or None for any
    other container."""
    if not is_ollama(c):
        return None
    return env.get("OLLAMA_MODELS") or posixpath.join(env.get("HOME", "/root"), ".ollama", "models")


def vllm_cache_root(c: dict, env: dict[str, str]) -> str | None:
    """Where a vLLM server keeps its compile and kernel caches (VLLM_CACHE_ROOT, else ~/.cache/vllm), or None."""
    if not is_vllm_server(c, argv_words(c)):
        return None
    return env.get("VLLM_CACHE_ROOT") or posixpath.join(env.get("HOME", "/root"), ".cache", "vllm")


def download_dirs(c: dict) -> list[str]:
    """The directories the container fills by its own configuration: its Hub cache, an Ollama server's model
    store, a vLLM server's compile cache."""
    env, argv = shown_env(c), argv_of(c)
    return [d for d in (cache_dir(c, argv, env), ollama_models_dir(c, env), vllm_cache_root(c, env)) if d]


# The Hub's default cache under a user's home (`~/.cache/huggingface`), when the env does not say whose home it is:
# the image's user decides (root's, or `ray` in Ray's images), so a mount at any home's default cache is that cache.
HOME_HUB_CACHE = re.compile(r"^(?:/root|/home/[^/]+)/\.cache/huggingface(?:/hub)?/?$")


def download_mounts(c: dict) -> set[int]:
    """Indices of the container's volumeMounts that hold one of its `download_dirs` or the destination of an
    object-store copy its script makes (a bucket's model synced into the mount), or the Hub's default cache of a home
    the env does not name."""
    env = shown_env(c)
    targets = [*download_dirs(c), *copy_destinations(c, env)]
    found = {j for j in (mount_index(c, d) for d in targets) if j is not None}
    if not any(env.get(v) for v in (*CACHE_ENV, "HF_HOME", "XDG_CACHE_HOME", "HOME")):
        found |= {j for j, m in enumerate(c.get("volumeMounts") or [])
                  if isinstance(m, dict) and HOME_HUB_CACHE.match(str(m.get("mountPath", "")))}
    return found


OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
TRUE = frozenset({"1", "ON", "YES", "TRUE"})  # huggingface_hub's constants._is_true


# `export NAME=value` in a container's script, with a literal value (no expansion): what the programs the script
# starts after it see.
EXPORT = re.compile(r"(?:^|[\s;&|(])export\s+([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"$`]*\"|'[^']*'|[^\s;&|$`'\"()]+)")


def script_exports(c: dict) -> dict[str, str]:
    """The literal variables the container's script exports (`export HF_HOME=/mnt/models`)."""
    return {m.group(1): m.group(2).strip("'\"") for w in argv_of(c) for m in EXPORT.finditer(w)}


def shown_env(c: dict) -> dict[str, str]:
    """The container's literal env, then what its script exports (a later export wins, as in the shell)."""
    return {**literal_env(c), **script_exports(c)}


def known_env(c: dict, config_maps: dict[str, dict]) -> dict[str, str]:
    """The container's env as far as the manifests show it: the ConfigMaps of the same manifests that its envFrom
    loads (with their prefix), then its env entries, literal or a `configMapKeyRef` into such a ConfigMap (an
    explicit env entry wins over envFrom, as in the kubelet), then the literal exports of its script."""
    env: dict[str, str] = {}
    for source in c.get("envFrom") or []:
        ref = (source.get("configMapRef") or {}) if isinstance(source, dict) else {}
        data = config_maps.get(ref.get("name")) if isinstance(ref, dict) else None
        if isinstance(data, dict):
            prefix = str(source.get("prefix") or "")
            env.update({f"{prefix}{k}": str(v) for k, v in data.items()})
    for e in c.get("env") or []:
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            continue
        source = e.get("valueFrom") if isinstance(e.get("valueFrom"), dict) else {}
        ref = source.get("configMapKeyRef")
        if isinstance(ref, dict):
            env[e["name"]] = str((config_maps.get(ref.get("name")) or {}).get(ref.get("key"), ""))
    env.update(shown_env(c))
    return env


def offline(env: dict[str, str]) -> bool:
    """HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE true in a container's env (`known_env`)."""
    return any(env.get(var, "").strip().upper() in TRUE for var in OFFLINE_ENV)


def mount_index(c: dict, path: str) -> int | None:
    """Index of the volumeMount that holds `path` (the deepest mountPath above it)."""
    best, depth = None, -1
    for j, m in enumerate(c.get("volumeMounts") or []):
        mount = (str(m.get("mountPath", "")).rstrip("/") or "/") if isinstance(m, dict) else ""
        if mount and (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) > depth:
            best, depth = j, len(mount)
    return best


def mount_at(c: dict, path: str) -> dict | None:
    """The volumeMount that holds `path` (the deepest mountPath above it)."""
    j = mount_index(c, path)
    return None if j is None else c["volumeMounts"][j]


def downloads(pod: dict, pod_path: str, with_ollama: bool = False, config_maps: dict[str, dict] | None = None
              ) -> Iterator[tuple[str, dict, list[Pull], str, dict[str, str]]]:
    """(container path, container, pulls, download directory, the container's env as `known_env` reads it) for every
    container of the pod that pulls from the hub at start: its own pulls into its cache, and a Trainer
    initializer's `STORAGE_URI` into /workspace; `with_ollama`: also an Ollama server's models, which it or a
    container beside it pulls at start (`pod_ollama_pulls`), into its model store. `config_maps`: the set's
    ConfigMaps by name (`config_map_data`), which the container's env may read."""
    ollama = [Pull(p.name, p.how, None) for p in pod_ollama_pulls(pod)] if with_ollama else []
    for field, i, c in containers(pod):
        env = known_env(c, config_maps or {})  # a ConfigMap of the set names the model or the cache too
        argv = argv_of(c)
        base = f"{pod_path}.{field}.{i}"
        if ollama and is_ollama(c):
            yield base, c, ollama, ollama_models_dir(c, env), env
        pulls = [p for p in start_pulls(c, argv, env) if p.repo != "a repository" or p.how == "snapshot_download"]
        if pulls:
            yield base, c, pulls, cache_dir(c, argv, env), env
        initialized = list(uri_pulls(env.get("STORAGE_URI", "")))
        if initialized:
            yield base, c, initialized, INITIALIZER_DIR, env
