"""Model servers in pod specs, by image or by the command that starts them (not a rule: no CODE)."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ...rayports import POD_PORTS
from ..shell import split_words
from ._objects import argv_of

# Image repositories of model servers (the last path segment, any registry, any tag).
SERVER_REPOS = frozenset({"vllm-openai", "vllm-tpu", "vllm", "sglang", "text-generation-inference", "tgi-gaudi",
                          "tritonserver", "lmdeploy", "ollama", "torchserve", "llama.cpp", "huggingfaceserver",
                          "local-ai", "localai"})
SERVER_REPO_PREFIXES = ("huggingface-text-generation-inference",)  # Google's TGI builds: version in the name
# Commands (argv words, or words of a shell script) that start a model server.
SERVER_COMMANDS = re.compile(
    r"\bvllm\s+serve\b|\bvllm\.entrypoints\.(openai\.)?api_server\b|\bsglang\.launch_server\b"
    r"|\btext-generation-launcher\b|(^|[\s/])tritonserver\b|\btensorflow_model_server\b|\blmdeploy\s+serve\b"
    r"|\bollama\s+serve\b|(^|[\s/])torchserve\b|(^|[\s/])llama-server\b|\btrtllm-serve\b|\blocal-ai\s+run\b")


def image_repo(image: str) -> str:
    """The image's repository: its reference without tag or digest (a registry's port kept)."""
    ref = image.split("@")[0]
    return ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref


def server_image(image: str) -> bool:
    repo = image_repo(image)
    last = repo.rsplit("/", 1)[-1]
    return last in SERVER_REPOS or last.startswith(SERVER_REPO_PREFIXES) or repo.endswith("tensorflow/serving")


def server_family(image: str) -> set[str]:
    """The servers an image is a build of, by the `-`-separated parts of its repository's last segment
    (`vllm-openai`, a project's `vllm-zephyr`: {"vllm"})."""
    return set(image_repo(image).rsplit("/", 1)[-1].lower().split("-")) & SERVER_REPOS


def argv(c: dict[str, Any]) -> str:
    return " ".join(argv_of(c)) if isinstance(c, dict) else ""


def is_model_server(c: dict[str, Any]) -> bool:
    """Whether the container runs a model server (vLLM, SGLang, TGI, Triton, TF Serving, lmdeploy, ollama,
    TorchServe, llama.cpp, TensorRT-LLM): its command says so, or it runs a server image's own entrypoint (a
    project's own build of one, `vllm-zephyr`, when its arguments are the engine's)."""
    if not isinstance(c, dict):
        return False
    command = argv(c)
    if SERVER_COMMANDS.search(command):
        return True
    image = str(c.get("image") or "")
    if not server_image(image):
        return not c.get("command") and bool(server_family(image)) and _runs_image_server(c)
    # a server image running something else (a shell that only copies, a benchmark client) is no server
    return not c.get("command") or _runs_image_server(c)


PORT_FLAG = re.compile(r"^--(?:http-|server-)?port(?:=(\d+))?$")


def stated_ports(c: dict[str, Any], flag: re.Pattern = PORT_FLAG) -> set[int]:
    """`--port N` / `--port=N` (and `--http-port`, `--server-port`; or the flags `flag` matches) in the container's
    command and args: where the server says it listens, whatever its container lists."""
    words = [part for w in argv_of(c) for part in w.split()]
    out = set()
    for i, w in enumerate(words):
        m = flag.match(w)
        value = m.group(1) if m and m.group(1) else (words[i + 1] if m and i + 1 < len(words) else None)
        if value and value.strip("'\"").isdigit():
            out.add(int(value.strip("'\"")))
    return out


def container_ports(c: dict[str, Any]) -> set[int]:
    """The ports a container declares (`ports[].containerPort`) or states with its own `--port` flag."""
    declared = {p["containerPort"] for p in c.get("ports") or [] if isinstance(p, dict)
                and isinstance(p.get("containerPort"), int)}
    return declared | stated_ports(c)


# Servers whose HTTP API, health and metrics all answer on the one port `--port` names (vLLM's OpenAI server,
# SGLang's launch_server): a probe of any other port of the container checks nothing they open.
ONE_PORT_SERVERS = re.compile(r"\bvllm\s+serve\b|\bvllm\.entrypoints\.(openai\.)?api_server\b"
                              r"|\bsglang\.launch_server\b|\bsglang\s+serve\b")


def one_port_server(c: dict[str, Any]) -> bool:
    return bool(ONE_PORT_SERVERS.search(argv(c)))


# Triton's HTTP API, KServe v2 health included (`/v2/health/ready`), answers on --http-port, 8000 by default;
# its metrics on --metrics-port, 8002 (triton-inference-server/server src/command_line_parser.h L195, L215,
# command_line_parser.cc L487 @e1db8a60).
TRITON = re.compile(r"(?:^|[\s/])tritonserver(?:\s|$)")
TRITON_HTTP_FLAG = re.compile(r"^--http-port(?:=(\S+))?$")
TRITON_HTTP_DEFAULT = 8000


def triton_http_port(c: dict[str, Any]) -> int | None:
    """The port a container's `tritonserver` serves HTTP on (its --http-port, else 8000); None when the container
    runs no tritonserver or names its port by a variable."""
    words = [part for w in argv_of(c) for part in w.split()]
    if not any(TRITON.search(w) for w in words):
        return None
    for i, w in enumerate(words):
        m = TRITON_HTTP_FLAG.match(w)
        if m:
            value = (m.group(1) or (words[i + 1] if i + 1 < len(words) else "")).strip("'\"")
            return int(value) if value.isdigit() else None
    return TRITON_HTTP_DEFAULT


# The ports a server opens when its flags name none: vLLM's OpenAI server 8000 (vllm/entrypoints/openai/cli_args.py,
# --port), SGLang's 30000 (sglang/srt/server_args.py, ServerArgs.port), Triton's HTTP 8000, gRPC 8001 and metrics
# 8002 (triton-inference-server/server src/command_line_parser.h, http_port_ / grpc_port_ / metrics_port_).
SGLANG_PORT = 30000
# SGLang's prefill server of a prefill/decode pair also serves the bootstrap its decode servers reach it through
# (sglang/srt/server_args.py: disaggregation_mode "prefill", disaggregation_bootstrap_port 8998 by default).
SGLANG_BOOTSTRAP_PORT = 8998
ONE_PORT_DEFAULTS = ((re.compile(r"\bsglang\.launch_server\b|\bsglang\s+serve\b"), SGLANG_PORT),
                     (re.compile(r"\bvllm\s+serve\b|\bvllm\.entrypoints\.(openai\.)?api_server\b"), 8000))
TRITON_PORTS = (("http", 8000), ("grpc", 8001), ("metrics", 8002))
# vLLM flags that open ports beside its API: a KV-transfer connector's (P2pNcclConnector binds a ZMQ router on the
# config's kv_port plus the worker's rank: vllm/distributed/kv_transfer/kv_connector/v1/p2p/p2p_nccl_engine.py;
# NixlConnector a side channel on VLLM_NIXL_SIDE_CHANNEL_PORT), data parallelism's RPC port. Which ports they are
# depends on the connector and the ranks, so such a server's ports are not known here.
VLLM_MORE_PORTS = re.compile(r"^--(?:kv-transfer-config|data-parallel-rpc-port|data-parallel-address)(?:=|$)")
SHELL_LIST = re.compile(r"[;&|\n]")


def listening_ports(c: dict[str, Any]) -> set[int] | None:
    """The ports the model server a container runs opens, by its own flags and its defaults; None when that is not
    known: no server read here, a port named by a variable, or a shell list that may start other programs too."""
    words = [part for w in argv_of(c) for part in w.split()]
    if any(SHELL_LIST.search(w) for w in words):
        return None
    text = " ".join(words)
    if TRITON.search(text):
        return _triton_ports(words)
    for pattern, default in ONE_PORT_DEFAULTS:
        if pattern.search(text):
            if default != SGLANG_PORT and any(VLLM_MORE_PORTS.match(w) for w in words):
                return None
            stated = _flag_values(words, re.compile(r"^--port(?:=(\S+))?$"))
            if stated is None:
                return None
            bootstrap = _sglang_bootstrap_port(words) if default == SGLANG_PORT else set()
            return None if bootstrap is None else (stated or {default}) | bootstrap
    return None


def _sglang_bootstrap_port(words: list[str]) -> set[int] | None:
    if _given(words, re.compile(r"^--disaggregation-mode(?:=(\S+))?$")) != ["prefill"]:
        return set()
    stated = _flag_values(words, re.compile(r"^--disaggregation-bootstrap-port(?:=(\S+))?$"))
    return None if stated is None else (stated or {SGLANG_BOOTSTRAP_PORT})


# TensorBoard 2 listens on the loopback unless told otherwise (tensorboard/plugins/core/core_plugin.py: `--host`,
# "What host to listen to (default: localhost)", `--bind_all` for every interface, `--port` 6006 by default); an
# image of TensorFlow 1 is left alone.
TENSORBOARD = re.compile(r"(?:^|/)tensorboard$|^tensorboard\.main$")
TENSORBOARD_PORT = 6006
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
TENSORFLOW_1 = re.compile(r"tensorflow[^:/]*:1\.")
TENSORFLOW_2 = re.compile(r"tensorflow[^:/]*:2\.")


def tensorboard_2_stated(c: dict[str, Any]) -> bool:
    """The container's image states TensorFlow 2 (`tensorflow/tensorflow:2.15.0`), whose TensorBoard serves the
    loopback only unless told otherwise; any other image leaves the TensorBoard version, and so its default host, an
    assumption (1.x served every interface)."""
    return bool(TENSORFLOW_2.search(str(c.get("image", ""))))


def loopback_only_port(c: dict[str, Any]) -> int | None:
    """The port a container's TensorBoard serves on the loopback only (no `--bind_all`, and `--host` absent or a
    loopback name), which nothing outside the pod reaches; None when the container runs no TensorBoard, binds it
    wider, names its host or port by a variable, or starts a shell list (another program may proxy it)."""
    words = [part.strip("'\"") for w in argv_of(c) for part in w.split()]
    if not any(TENSORBOARD.search(w) for w in words) or any(SHELL_LIST.search(w) for w in words):
        return None
    if TENSORFLOW_1.search(str(c.get("image", ""))):
        return None  # TensorBoard 1.x served every interface by default
    if "--bind_all" in words:
        return None
    hosts = _flag_words(words, "--host")
    if any(h not in LOOPBACK_HOSTS for h in hosts):
        return None
    ports = _flag_values(words, re.compile(r"^--port(?:=(\S+))?$"))
    if ports is None or len(ports) > 1:
        return None
    return next(iter(ports), TENSORBOARD_PORT)


def _flag_words(words: list[str], flag: str) -> list[str]:
    """The values a flag is given, as `--flag value` or `--flag=value` (quotes stripped); a flag followed by another
    flag or by nothing is given the empty string, which no host or number is."""
    return _given(words, re.compile(rf"^{re.escape(flag)}(?:=(.*))?$"))


def _given(words: list[str], flag: re.Pattern) -> list[str]:
    out = []
    for i, w in enumerate(words):
        m = flag.match(w)
        if m:
            following = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else ""
            out.append((following if m.group(1) is None else m.group(1)).strip("'\""))
    return out


RAY_START = re.compile(r"\bray\s+start\b")
OTHER_PORT_FLAG = re.compile(r"^--(?:grpc|metrics|dashboard|ray-client-server)-port(?:=(\d+))?$")


def may_open(c: dict[str, Any]) -> set[int]:
    """Every port the programs a container starts may open by their flags and defaults, shell lists included (a
    superset: a Service on one of them is not reported as unanswered): the model servers above and a `ray start`
    (Ray's head and node ports, rayports.POD_PORTS, its --port and --dashboard-port)."""
    text = argv(c)
    out = stated_ports(c) | stated_ports(c, OTHER_PORT_FLAG)
    if TRITON.search(text):
        out |= {default for _name, default in TRITON_PORTS}
    out |= {default for pattern, default in ONE_PORT_DEFAULTS if pattern.search(text)}
    if RAY_START.search(text):
        out |= set(POD_PORTS.values())
    return out


def _flag_values(words: list[str], flag: re.Pattern) -> set[int] | None:
    """The numbers a flag is given (empty when it is absent); None when one is not a number."""
    values = _given(words, flag)
    return {int(v) for v in values} if all(v.isdigit() for v in values) else None


def _triton_ports(words: list[str]) -> set[int] | None:
    out = set()
    for name, default in TRITON_PORTS:
        if any(re.fullmatch(rf"--allow-{name}=(?:false|0)", w, re.IGNORECASE) for w in words):
            continue
        stated = _flag_values(words, re.compile(rf"^--{name}-port(?:=(\S+))?$"))
        if stated is None:
            return None
        out |= stated or {default}
    return out


# Programs that start a notebook server (Jupyter's commands and its images' start scripts, code-server).
NOTEBOOK_PROGRAMS = frozenset({"jupyter", "jupyter-lab", "jupyter-notebook", "jupyterhub-singleuser",
                               "start-notebook.sh", "start-notebook.py", "start-singleuser.sh", "code-server"})


def command_programs(c: dict[str, Any]) -> set[str]:
    """The base names of the words of a container's command and args, split at shell separators."""
    return {posixpath.basename(w) for w in re.split(r"[\s;&|()]+", argv(c)) if w}


def is_notebook(c: dict[str, Any]) -> bool:
    """A container that runs a notebook server: it loads no model before it answers."""
    return bool(command_programs(c) & NOTEBOOK_PROGRAMS)


# A Jupyter token flag and its value; `--LabApp.token` is passed on to ServerApp too (jupyter_server's shim logs
# "'token' has moved from LabApp to ServerApp").
TOKEN_FLAG = re.compile(r"--(?:NotebookApp|ServerApp|IdentityProvider|LabApp)\.token=(?:'([^']*)'|\"([^\"]*)\"|(\S*))")


def jupyter_token_off(c: dict[str, Any]) -> str | None:
    """How a Jupyter server's token is switched off: the token flag its command sets empty, or `JUPYTER_TOKEN` its
    env sets to an empty literal; None where neither."""
    for m in TOKEN_FLAG.finditer(argv(c)):
        if next((g for g in m.groups() if g is not None), "") == "":
            return m.group(0)
    env = {str(e.get("name")): e.get("value", e.get("valueFrom")) for e in c.get("env") or [] if isinstance(e, dict)}
    return "JUPYTER_TOKEN=''" if env.get("JUPYTER_TOKEN") == "" else None


# Arguments only a model engine's server takes: what a server image's own entrypoint is started with.
ENGINE_FLAGS = frozenset({"--model", "--model-path", "--model-id", "--tensor-parallel-size", "--max-model-len",
                          "--gpu-memory-utilization", "--served-model-name"})


def _runs_image_server(c: dict[str, Any]) -> bool:
    words = [str(w) for w in c.get("command") or []]
    try:
        words = [*words, *split_words(" ".join(str(a) for a in c.get("args") or []))]
    except ValueError:
        pass
    # another program of the image (LMCache's cache server in a vLLM image, a benchmark client) is no model server
    return any(w.split("=", 1)[0] in ENGINE_FLAGS for w in words)


# Servers that load no model when they start, only when a request (or an API call) names one: Ollama pulls and
# loads a model on the first request for it, Triton in explicit model control loads only what `--load-model` names.
# Such a server is ready to answer as soon as it listens, unless its start pulls a model (`ollama pull` in the
# command or a postStart hook): requests for that model fail until the pull ends.
OLLAMA_PRELOAD = re.compile(r"\bollama\s+(pull|run)\b")
TRITON_EXPLICIT = re.compile(r"--model-control-mode[=\s]+explicit\b")


def is_ollama(c: dict[str, Any]) -> bool:
    """An Ollama server: `ollama serve` in its command, or the ollama image's own entrypoint."""
    name = image_repo(str(c.get("image") or "")).rsplit("/", 1)[-1]
    return bool(re.search(r"\bollama\s+serve\b", argv(c))) or (name == "ollama" and not c.get("command"))


# llama.cpp's server, and Ollama's runner built on it, split a model's layers over the GPUs they hold from one
# process: no process per GPU, no NCCL between them.
LLAMA_CPP_SERVER = re.compile(r"(^|[\s/])llama-server\b|\bllama_cpp\.server\b")


def one_process_server(c: dict[str, Any]) -> bool:
    """A model server that drives all its GPUs from one process (Ollama, llama.cpp's server)."""
    return is_ollama(c) or bool(LLAMA_CPP_SERVER.search(argv(c)))


def loads_no_model_at_start(c: dict[str, Any]) -> bool:
    """Whether the model server loads no model until asked (Ollama without a start-time pull, Triton in explicit
    model control with no `--load-model`, LocalAI started with no model)."""
    command = argv(c)
    if is_localai(c):
        return not _localai_models_at_start(c)
    if is_ollama(c):
        return not OLLAMA_PRELOAD.search(" ".join([command, *_post_start(c)]))
    if re.search(r"(^|[\s/])tritonserver\b", command) and TRITON_EXPLICIT.search(command):
        return "--load-model" not in command
    return False


def is_localai(c: dict[str, Any]) -> bool:
    """A LocalAI server: `local-ai run` in its command, or a LocalAI image's own entrypoint."""
    name = image_repo(str(c.get("image") or "")).rsplit("/", 1)[-1]
    return bool(re.search(r"\blocal-ai\s+run\b", argv(c))) or (name in ("local-ai", "localai")
                                                                and not c.get("command"))


# LocalAI downloads and loads at start the models named as `local-ai run` arguments (the image's entrypoint passes
# its args on) or in these variables; its All-in-One (`-aio-`) images preload their own model set. Without them it
# loads a model on the first request that names it (localai.io: getting-started/models, reference/cli-reference).
LOCALAI_MODEL_ENV = frozenset({"MODELS", "LOCALAI_MODELS", "PRELOAD_MODELS", "LOCALAI_PRELOAD_MODELS"})


def _localai_models_at_start(c: dict[str, Any]) -> bool:
    if "aio" in str(c.get("image") or "").rsplit(":", 1)[-1].split("-"):
        return True
    if any(isinstance(e, dict) and e.get("name") in LOCALAI_MODEL_ENV and e.get("value") for e in c.get("env") or []):
        return True
    words = argv(c).split()
    if "run" in words:
        words = words[words.index("run") + 1:]
    elif c.get("command"):
        return False
    # a positional argument is a model; a flag's value follows it unless written `--flag=value`
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = "=" not in w
        else:
            return True
    return False


def _post_start(c: dict[str, Any]) -> list[str]:
    node: Any = c
    for key in ("lifecycle", "postStart", "exec", "command"):
        node = node.get(key) if isinstance(node, dict) else None
    return [str(w) for w in node] if isinstance(node, list) else []


# Kinds whose pods serve for as long as they run (a Job's or a Ray group's pods do not stand behind a probe-gated
# Service the same way: KubeRay sets its own probes, a Job's pod is done when it exits).
SERVING_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod", "LeaderWorkerSet"})


def serving_containers(ctx):
    """(object, pod path, pod spec, index, container) for every model-server container of a serving workload."""
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind not in SERVING_KINDS or _lws_worker_behind_leader(o, pod_path):
            continue
        for i, c in enumerate(pod.get("containers") or []):
            if isinstance(c, dict) and is_model_server(c):
                yield o, pod_path, pod, i, c


def _lws_worker_behind_leader(o, pod_path: str) -> bool:
    """A LeaderWorkerSet's workers join the leader's server; the leader serves (without a leaderTemplate the
    workerTemplate is the leader's too)."""
    group = (o.obj.get("spec") or {}).get("leaderWorkerTemplate") if o.kind == "LeaderWorkerSet" else None
    return isinstance(group, dict) and bool(group.get("leaderTemplate")) and ".workerTemplate." in f"{pod_path}."


def probe_budget(probe: Any) -> int | None:
    """initialDelaySeconds + failureThreshold x periodSeconds, the API server's defaults for missing fields."""
    if not isinstance(probe, dict):
        return None
    try:
        return int(probe.get("initialDelaySeconds", 0)) + int(probe.get("failureThreshold", 3)) * int(
            probe.get("periodSeconds", 10))
    except (TypeError, ValueError):
        return None
