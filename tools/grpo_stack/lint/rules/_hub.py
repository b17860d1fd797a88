"""Hugging Face Hub pulls a pod makes, and whether each names a fixed revision (not a rule: no CODE).

A pull is found in the forms model servers and tools accept: a server's model flag (`vllm serve ORG/NAME`,
`--model`, `--model-path`, `--model-id`, `--tokenizer`, ...), TGI's `MODEL_ID` environment, `hf download` /
`huggingface-cli download`, `git clone https://huggingface.co/...`, Python's `snapshot_download` /
`hf_hub_download` / `from_pretrained` / `load_dataset`, the model of `pipeline(model=...)`, `SentenceTransformer`,
`CrossEncoder` and LangChain's `HuggingFaceEmbeddings(model_name=...)`, and `hf://` URIs in any field (KServe
`storageUri`, Kubeflow Trainer initializers). A local path (`/models/x`, `./ckpt`) is not a hub pull.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

# A hub repository id: `org/name` (one slash), no path-like first segment.
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")
# First path segments that name a directory, not a hub organisation (`models/Qwen3-8B` relative to workingDir).
LOCAL_DIRS = frozenset({"models", "model", "checkpoints", "checkpoint", "ckpt", "ckpts", "data", "datasets",
                        "weights", "output", "outputs", "cache", "tmp", "mnt", "home", "workspace", "local",
                        "results", "run", "runs", "artifacts", "root", "opt", "srv", "var", "app"})
# `provider/model` names of API clients (LiteLLM, eval harnesses): `--model openai/gpt-4o` calls an API, it pulls
# nothing, unless a model server takes the flag (vLLM's `--model openai/gpt-oss-20b` is a hub repository).
API_PROVIDERS = frozenset({"openai", "anthropic", "azure", "azure_ai", "bedrock", "vertex_ai", "gemini", "groq",
                           "together_ai", "ollama", "cohere", "litellm", "openrouter", "fireworks_ai", "hosted_vllm"})
SERVERS = ("vllm", "sglang", "lmdeploy", "text-generation-launcher", "trtllm-serve", "tensorrt_llm")
BRANCHES = frozenset({"main", "master", "refs/heads/main", "refs/heads/master"})

# Flags that name the model (or tokenizer) a server or trainer loads, by the tools that take them.
MODEL_FLAGS = frozenset({"--model", "--model-path", "--model-id", "--model_id", "--model-name-or-path",
                         "--model_name_or_path", "--tokenizer", "--tokenizer-path", "--tokenizer_path",
                         "--tokenizer-name-or-path", "--tokenizer_name"})
# llama.cpp's own Hub download (common/arg.cpp: `-hf`, `-hfr`, `--hf-repo <user>/<model>[:quant]`; the draft and
# vocoder models' `-hfd` / `--hf-repo-draft`, `-hfv` / `--hf-repo-v`; `LLAMA_ARG_HF_REPO` in the env): it fetches
# the repository's main branch and takes no revision, so such a pull is never pinned.
LLAMA_HUB_FLAGS = frozenset({"-hf", "-hfr", "--hf-repo", "-hfd", "-hfrd", "--hf-repo-draft", "-hfv", "-hfrv",
                             "--hf-repo-v"})
LLAMA_HUB_ENV = "LLAMA_ARG_HF_REPO"
# Programs whose first positional argument after a subcommand is the model: `vllm serve M`, `lmdeploy serve
# api_server M`, `sglang serve M` is spelled with --model-path.
POSITIONAL = {("vllm", "serve"): 0, ("lmdeploy", "serve"): 1}
# A flag of that pull that fixes the revision (`--revision`, `--code-revision`, `--model_revision`, `--tokenizer-
# revision`); `--served-model-name` and the like are not pulls.
REVISION_FLAG = re.compile(r"^--(?:[\w-]*[-_])?revision(?:=(.*))?$")
PY_CALL = re.compile(r"\b(snapshot_download|hf_hub_download|from_pretrained|load_dataset)\s*\(")
# Python constructors that load a hub model named by a keyword (Transformers' `pipeline(task, model=...)`,
# LangChain's `HuggingFaceEmbeddings(model_name=...)`) or first (sentence-transformers' `SentenceTransformer`,
# `CrossEncoder`), each with the keyword that names it.
PY_MODEL_CALL = re.compile(r"\b(pipeline|HuggingFaceEmbeddings|SentenceTransformer|CrossEncoder)\s*\(")
MODEL_KEYWORD = {"pipeline": "model", "HuggingFaceEmbeddings": "model_name",
                 "SentenceTransformer": "model_name_or_path", "CrossEncoder": "model_name"}
# `revision="..."` among a Python call's arguments.
REVISION_KEYWORD = re.compile(r"\brevision\s*=\s*(['\"]?)([^,'\")\s]+)\1")
HF_URI = re.compile(r"\bhf://([\w.-]+/[\w.-]+(?:/[\w.-]+)?)([:@][\w./-]+)?")
HUB_GIT = re.compile(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/((?:datasets/|spaces/)?[\w.-]+/[\w.-]+?)"
                     r"(?:\.git)?/?$")
# A file fetched from the Hub by URL (curl, wget): `https://huggingface.co/ORG/NAME/resolve/REV/FILE`; REV is a
# branch (`main`: whatever it holds that day) or a commit.
HUB_FILE_URL = re.compile(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/((?:datasets/|spaces/)?[\w.-]+/[\w.-]+)"
                          r"/(?:resolve|raw|blob)/([^/?#\s]+)/")
URL_FETCHERS = frozenset({"curl", "wget", "aria2c", "axel"})
ENV_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_]"
                     r"[A-Za-z0-9_]*)")
SHA = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class Pull:
    repo: str
    how: str  # "vllm --model", "snapshot_download", "hf:// URI"
    revision: str | None  # None: no revision given
    canonical: bool = False  # a name with no owner (`gpt2`), read as the Hub's canonical id: an assumption
    fetched: bool = False  # one file fetched by its URL (curl -o PATH): it lands where the fetcher writes, no Hub cache
    revisionless: bool = False  # the tool takes no revision (llama.cpp's --hf-repo): it always fetches the main branch

    @property
    def pinned(self) -> bool:
        return self.revision is not None and self.revision.strip("'\"") not in BRANCHES


def hub_repo(value: str) -> bool:
    """`Qwen/Qwen3-8B` is a hub id; `/models/x`, `./x`, `models/x`, `gpt-4`, a URL, a template are not."""
    value = value.strip().strip("'\"")
    if not REPO_ID.match(value) or "$" in value or "{" in value:
        return False
    return value.split("/", 1)[0].lower() not in LOCAL_DIRS


def resolve(word: str, env: dict[str, str]) -> str:
    """A word with `$(VAR)` (Kubernetes) and `$VAR` / `${VAR}` (shell) replaced by the container's literal env
    values, through variables that hold others; a reference to an unknown variable is kept (the word then names no
    repository)."""
    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2) or m.group(4)
        if name in env:
            return env[name]
        return m.group(3) if m.group(3) is not None else m.group(0)
    for _ in range(3):  # a variable may hold others (`URL="https://.../${REPO}/..."`, REPO from a ConfigMap)
        expanded = ENV_REF.sub(sub, word)
        if expanded == word:
            break
        word = expanded
    return word


# Words that run the command after them (`exec vllm serve ...`, `env HF_HOME=/x hf download ...`).
LAUNCH_PREFIXES = frozenset({"exec", "nohup", "time", "command", "env"})


def _unwrapped(words: list[str]) -> list[str]:
    """The command a launcher prefix runs: `exec`, `nohup`, `time`, `command` and `env` (with its assignments)."""
    while words and posixpath.basename(words[0]) in LAUNCH_PREFIXES:
        words = words[1:]
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
    return words


# A Hydra override naming the model a trainer loads (verl's `actor_rollout_ref.model.path`, `critic.model.path`,
# `reward_model.model.path`, its SFT trainer's `model.partial_pretrain`): verl hands the value to Transformers'
# from_pretrained as it is, so a hub id is fetched at start from the branch's head; verl has no key for a revision
# (a pinned download to a local path is the fix).
HYDRA_MODEL_KEY = re.compile(r"^\+{0,2}(?:\w+\.)*model\.(?:path|partial_pretrain)$")


def argv_pulls(argv: list[str], env: dict[str, str]) -> Iterator[Pull]:
    """Pulls one command line makes (a container's command + args, or one command of a script)."""
    words = _unwrapped([resolve(str(w).strip("'\""), env) for w in argv])
    if not words:
        return
    program = posixpath.basename(words[0])
    if program in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        program = words[2].rsplit(".", 1)[0]  # python -m sglang.launch_server -> sglang
    revision = _revision(words)
    server = any(name in " ".join(words[:4]) for name in SERVERS)
    seen: set[str] = set()
    for i, word in enumerate(words):
        flag, eq, inline = word.partition("=")
        if flag in MODEL_FLAGS:
            value = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
            if not server and value.split("/", 1)[0].lower() in API_PROVIDERS:
                continue
            if hub_repo(value) and value not in seen:
                seen.add(value)
                rev = _revision_for(words, flag, revision)
                yield Pull(value.strip("'\""), f"{program} {flag}", rev)
    for i, word in enumerate(words):
        flag, eq, inline = word.partition("=")
        if flag in LLAMA_HUB_FLAGS:
            repo = llama_repo(inline if eq else (words[i + 1] if i + 1 < len(words) else ""))
            if repo and repo not in seen:
                seen.add(repo)
                # args alone go to the image's own entrypoint: the flag is all the command names
                yield Pull(repo, flag if program.startswith("-") else f"{program} {flag}", None, revisionless=True)
    for word in words:
        key, eq, value = word.partition("=")
        value = value.strip("'\"")
        if eq and HYDRA_MODEL_KEY.match(key) and hub_repo(value) and value not in seen:
            seen.add(value)
            yield Pull(value, f"{program} {key.lstrip('+')}", None)
    for (prog, sub), index in POSITIONAL.items():
        if program == prog and sub in words[1:2]:
            positional = [w for w in _positionals(words[2:])]
            if len(positional) > index and hub_repo(positional[index]) and positional[index] not in seen:
                yield Pull(positional[index], f"{prog} {sub}", revision)
    if program in ("hf", "huggingface-cli") and words[1:2] == ["download"]:
        positional = _positionals(words[2:])
        if positional and positional[0] not in seen:
            yield Pull(positional[0], f"{program} download", revision)
    if program in URL_FETCHERS:
        for w in words:
            m = HUB_FILE_URL.match(w.replace('"', "").replace("'", ""))  # a script variable's own quotes
            if m and "$" not in m.group(0) and m.group(1) not in seen:
                seen.add(m.group(1))
                yield Pull(m.group(1), f"{program} of a /resolve/ URL", m.group(2), fetched=True)
    if program == "git" and "clone" in words[1:3]:
        for w in words:
            m = HUB_GIT.match(w)
            if m:
                yield Pull(m.group(1), "git clone", _clone_revision(words))
    yield from _initializer_pulls(words)


# The Kubeflow Training Operator's storage initializer (sdk/python/kubeflow/storage_initializer, the `train()` API's
# init container): `--model_provider hf --model_provider_parameters '{"model_uri": ...}'` runs
# `from_pretrained(model_uri)` and `--dataset_provider hf` with `{"repo_id": ...}` runs `load_dataset(repo_id)`,
# neither with a revision (its parameters have none).
INITIALIZER_PARAMS = {"--model_provider": ("--model_provider_parameters", "model_uri"),
                      "--dataset_provider": ("--dataset_provider_parameters", "repo_id")}


def _initializer_pulls(words: list[str]) -> Iterator[Pull]:
    for provider, (params, key) in INITIALIZER_PARAMS.items():
        if flag_value(words, (provider,)) != "hf":
            continue
        try:
            config = json.loads(flag_value(words, (params,)) or "")
        except ValueError:
            continue
        value = config.get(key) if isinstance(config, dict) else None
        repo = str(value).removeprefix("hf://") if isinstance(value, str) else ""
        if hub_repo(repo):
            yield Pull(repo, f"storage initializer {params} {key}", None)


def llama_repo(value: str) -> str | None:
    """The Hub repository of a llama.cpp `--hf-repo` value (`<user>/<model>[:quant]`), None if it names none."""
    repo = value.strip("'\"").partition(":")[0]
    return repo if hub_repo(repo) else None


def llama_env_pull(env: dict[str, str]) -> Pull | None:
    """llama.cpp's download named by its env form, `LLAMA_ARG_HF_REPO`."""
    repo = llama_repo(env.get(LLAMA_HUB_ENV, ""))
    return Pull(repo, f"env {LLAMA_HUB_ENV}", None, revisionless=True) if repo else None


def llama_hub_pull(argv: list[str], env: dict[str, str]) -> bool:
    """llama.cpp downloads from the Hub at start: a `--hf-repo` flag among the words, or its env form."""
    return any(w.partition("=")[0] in LLAMA_HUB_FLAGS for w in argv) or bool(llama_repo(env.get(LLAMA_HUB_ENV, "")))


def flag_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of `names` in argv, as `--name=value` or `--name value`."""
    for i, w in enumerate(argv):
        head, eq, value = w.partition("=")
        if head in names:
            return value if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return None


def _positionals(words: list[str]) -> list[str]:
    """Words that are not flags or flag values (a flag takes the next word unless it is `--x=y` or a switch
    followed by another flag)."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w.startswith("-"):
            skip = "=" not in w
            continue
        out.append(w)
    return out


def _revision(words: list[str]) -> str | None:
    for i, w in enumerate(words):
        m = REVISION_FLAG.match(w)
        if m and not w.startswith(("--tokenizer-revision", "--tokenizer_revision")):
            return m.group(1) if m.group(1) is not None else (words[i + 1] if i + 1 < len(words) else "")
    return None


def _revision_for(words: list[str], flag: str, model_revision: str | None) -> str | None:
    """A tokenizer flag is pinned by `--tokenizer-revision`, or follows the model's revision (vLLM: the tokenizer
    revision defaults to the model's when the tokenizer is the model)."""
    if flag.startswith("--tokenizer"):
        for i, w in enumerate(words):
            head, eq, value = w.partition("=")
            if head in ("--tokenizer-revision", "--tokenizer_revision"):
                return value if eq else (words[i + 1] if i + 1 < len(words) else "")
    return model_revision


def _clone_revision(words: list[str]) -> str | None:
    for i, w in enumerate(words):
        if w in ("-b", "--branch") and i + 1 < len(words):
            return words[i + 1] if SHA.match(words[i + 1]) or re.match(r"^v?\d", words[i + 1]) else "main"
        if w.startswith("--revision"):
            return w.partition("=")[2] or (words[i + 1] if i + 1 < len(words) else "")
    return None


# A name with no owner that the Hub serves as a canonical repository (`gpt2`, `bert-base-cased`, `imdb`): not a
# file name (an extension) nor a directory word.
CANONICAL = re.compile(r"^[A-Za-z][\w-]{1,95}(\.\d+)?$")


def python_pulls(source: str, canonical: bool = False) -> Iterator[tuple[int, Pull]]:
    """(offset, pull) for each hub call in Python source (an inline `python -c`, a heredoc, a ConfigMap script)
    whose repository is a literal hub id, or a variable the source assigns one once (`snapshot_download` always
    downloads: any variable counts too). With
    `canonical`, a name with no owner (`from_pretrained("bert-base-cased")`) counts too, marked as an assumption,
    unless the same source also writes it (a directory it saves or creates)."""
    for m in PY_CALL.finditer(source):
        call = m.group(1)
        args = _call_args(source, m.end())
        first = re.match(r"\s*(?:repo_id\s*=\s*|pretrained_model_name_or_path\s*=\s*|path\s*=\s*)?(['\"])([^'\"]+)\1",
                         args)
        repo = first.group(2) if first else _assigned_once(source, args)
        if repo is None and call not in ("snapshot_download", "hf_hub_download"):
            continue
        if call == "load_dataset" and repo in PACKAGED_BUILDERS:
            continue  # `load_dataset("json", data_files=...)` reads local files with a builder Datasets ships
        bare = canonical and repo is not None and _canonical(repo, source)
        if repo is not None and not hub_repo(repo) and not bare:
            continue
        rev = REVISION_KEYWORD.search(args)
        yield m.start(), Pull(repo or "a repository", call, rev.group(2) if rev else None, canonical=bare)
    yield from _constructor_pulls(source)
    yield from config_pulls(source)


# The builders Datasets ships, which `load_dataset(NAME, data_files=...)` runs on local or remote files without the
# Hub (datasets 5.2.0, packaged_modules/__init__.py _PACKAGED_DATASETS_MODULES).
PACKAGED_BUILDERS = frozenset({
    "csv", "json", "pandas", "parquet", "arrow", "text", "conll", "imagefolder", "audiofolder", "videofolder",
    "meshfolder", "pdffolder", "niftifolder", "webdataset", "xml", "hdf5", "eval", "lance", "tsfile", "iceberg",
    "vortex", "mmcif", "pdb", "genbank", "fasta", "fastq", "harbor"})


def _constructor_pulls(source: str) -> Iterator[tuple[int, Pull]]:
    """(offset, pull) for each PY_MODEL_CALL whose model is a literal hub id (an `org/name`: a bare name is a task or
    a local model more often than not)."""
    for m in PY_MODEL_CALL.finditer(source):
        call, args = m.group(1), _call_args(source, m.end())
        named = re.search(rf"\b{MODEL_KEYWORD[call]}\s*=\s*(['\"])([^'\"]+)\1", args)
        first = None if call in ("pipeline", "HuggingFaceEmbeddings") else re.match(r"\s*(['\"])([^'\"]+)\1", args)
        repo = (named or first).group(2) if (named or first) else None
        if repo is None or not hub_repo(repo):
            continue
        rev = REVISION_KEYWORD.search(args)
        yield m.start(), Pull(repo, call, rev.group(2) if rev else None)


# Transformers' and TRL's model arguments written as a mapping (a YAML recipe, a JSON or Python dict passed to the
# script): `model_name_or_path: ORG/NAME` beside an optional `model_revision`.
CONFIG_MODEL = re.compile(r"""(?<![-\w])['"]?model_name_or_path['"]?\s*[:=]\s*['"]?([\w.-]+/[\w.-]+)['"]?""")
CONFIG_REVISION = re.compile(r"""['"]?model_revision['"]?\s*[:=]\s*['"]?([\w./-]+)['"]?""")


def config_pulls(source: str) -> Iterator[tuple[int, Pull]]:
    """(offset, pull) for each `model_name_or_path` naming a hub id in a mapping of model arguments, pinned by the
    `model_revision` the same text gives (a branch such as `main` pins nothing)."""
    revision = CONFIG_REVISION.search(source)
    for m in CONFIG_MODEL.finditer(source):
        if hub_repo(m.group(1)):
            yield m.start(), Pull(m.group(1), "model_name_or_path", revision.group(1) if revision else None)


FIRST_NAME = re.compile(r"\s*(?:repo_id\s*=\s*|pretrained_model_name_or_path\s*=\s*|path\s*=\s*)?"
                        r"([A-Za-z_]\w*)\s*(?:,|$)")


def _assigned_once(source: str, args: str) -> str | None:
    """The string a call's first argument names when it is a variable the same source assigns exactly once, from a
    string literal (`model_name = "google/gemma-2-27b-it"` ... `from_pretrained(model_name)`)."""
    name = FIRST_NAME.match(args)
    if not name:
        return None
    found = re.findall(rf"^[ \t]*{name.group(1)}[ \t]*=[ \t]*(.*?)[ \t]*(?:#.*)?$", source, re.MULTILINE)
    literal = re.fullmatch(r"(['\"])([^'\"]+)\1", found[0]) if len(found) == 1 else None
    return literal.group(2) if literal else None


def _canonical(name: str, source: str) -> bool:
    if not CANONICAL.match(name) or name.lower() in LOCAL_DIRS:
        return False
    quoted = re.escape(name)
    written = re.search(rf"\b(save_pretrained|save_to_disk|makedirs|mkdir|to_csv|to_json|to_parquet|open)\s*\(\s*"
                        rf"(['\"]){quoted}\2", source)
    return written is None


def _call_args(source: str, start: int) -> str:
    """The text inside the parentheses that open at `start` (balanced, bounded)."""
    depth, i = 1, start
    while i < len(source) and depth and i - start < 4000:
        depth += {"(": 1, ")": -1}.get(source[i], 0)
        i += 1
    return source[start:i - 1]


def uri_pulls(text: str) -> Iterator[Pull]:
    """`hf://org/name[:revision]` (KServe) or `hf://org/name@revision` (huggingface_hub's file system)."""
    if "hf://" not in text:  # asked of every string of every object: most hold none
        return
    for m in HF_URI.finditer(text):
        parts = m.group(1).split("/")
        repo = "/".join(parts[:3] if parts[0] in ("datasets", "spaces") else parts[:2])
        rev = m.group(2)[1:] if m.group(2) else None
        yield Pull(repo, "hf:// URI", rev)
