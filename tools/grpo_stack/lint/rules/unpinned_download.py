"""GRPO871 unpinned-model-download."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import assigned, command_name, command_words, commands_in, config_map_data, parse, script_in, scripts
from ._accelerators import asked
from ._cache_paths import entrypoint_pulls, known_env, script_argv_pulls
from ._hub import (
    API_PROVIDERS,
    LLAMA_HUB_ENV,
    Pull,
    argv_pulls,
    hub_repo,
    llama_env_pull,
    python_pulls,
    resolve,
    uri_pulls,
)
from ._objects import containers, for_finite_work, inline_commands, literal_env
from ._ollama import OllamaPull, ollama_pulls, script_ollama_pulls
from ._runtime_env import runtime_env_vars, serve_llm_models
from ._trainer_configs import PINNED_BY, config_text_pulls

CODE = "GRPO871"
NAME = "unpinned-model-download"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A pod pulls a model or dataset from the Hugging Face Hub without a fixed revision (it tracks a "
           "branch), or a model from the Ollama registry by a tag.")
DOC = """## What it does
Finds every pull from the Hugging Face Hub that a pod makes, in every controller's pod templates (Deployment,
StatefulSet, Job, CronJob, RayCluster/RayJob/RayService, JobSet, LeaderWorkerSet, Kubeflow Trainer runtimes...):

- a model server's model: `vllm serve ORG/NAME`, `--model`, `--model-path` (SGLang), `--model-id` (TGI,
  `text-generation-launcher`), `--model_id` (KServe), `lmdeploy serve api_server ORG/NAME`, `--tokenizer`,
  `--model_name_or_path` (Transformers scripts), in `command`/`args` or in the commands of an inline script;
  `$(VAR)` and `$VAR` are read from the container's env: its literal values and a ConfigMap of the same
  manifests it loads (`envFrom`, `configMapKeyRef`); a server image's own entrypoint given the model as
  its first argument (`args: [ORG/NAME, --max-model-len, ...]` to an image that runs `vllm serve`);
- a trainer's Hydra override naming its model (verl's `actor_rollout_ref.model.path=ORG/NAME`, `critic.model.path`,
  any `*.model.path`): verl passes it to Transformers as it is and has no revision key, so a hub id there always
  tracks its branch;
- the Kubeflow Training Operator's storage initializer (`--model_provider hf` with `model_uri` in
  `--model_provider_parameters`, `--dataset_provider hf` with `repo_id`): it downloads with no revision, and its
  parameters take none;
- TGI's `MODEL_ID` and the Hugging Face containers' `HF_MODEL_ID` environment;
- a hub id in the env a project's own program reads its model from (`MODEL_ID`, `MODEL_NAME`, `BASE_MODEL`, ..., in
  any case, `model_name` too, and
  each id of a comma-separated list in `MODELS`, `MODEL_IDS`, `MODEL_NAMES`, `MODEL_LIST`; a RayJob's `runtimeEnvYAML`
  and a RayService application's `runtime_env` env_vars, and a ConfigMap of env too) that its command does not name
  itself, where the program loads models: its pod holds an accelerator or runs to completion, it is a Ray job's or
  Serve application's, or a revision variable sits beside the name (a web app's `MODEL_ID` is usually the name it asks
  a model server for). A warning, since only the program's code shows that it loads that id from the Hub. A
  `*REVISION` or `*COMMIT` variable beside it pins it, unless it names a branch (`MODEL_REVISION: main`);
- llama.cpp's own download (`llama-server -hf ORG/NAME[:QUANT]`, `--hf-repo`, the draft and vocoder models'
  `--hf-repo-draft` / `--hf-repo-v`, or `LLAMA_ARG_HF_REPO` in the env): it fetches the repository's main branch
  and has no revision option, so it is always reported; the fix downloads the file at a commit and serves it with
  `-m`;
- `hf download`, `huggingface-cli download` and `git clone https://huggingface.co/...` in scripts, and a file
  fetched by its URL (`curl` / `wget` of `https://huggingface.co/ORG/NAME/resolve/main/FILE`: the path's revision,
  here a branch, must be a commit);
- a fine-tuning framework's config file in a ConfigMap: axolotl's `base_model` (pinned by `revision_of_model`) and
  each hub `path` of its `datasets` / `test_datasets` (pinned by the entry's `revision`; an entry that lists its
  `data_files` may read a local directory and is not judged), LLaMA-Factory's `model_name_or_path` (pinned by
  `model_revision`); a file is read as one only where it holds that framework's other keys;
- Python's `snapshot_download`, `hf_hub_download`, `from_pretrained` and `load_dataset` in inline code
  (`python -c`, heredocs) and in ConfigMap scripts, naming the repository literally or through a variable the code
  assigns once; a name there with no owner (`from_pretrained("gpt2")`,
  `load_dataset("imdb")`) is the Hub's canonical repository unless a directory of that name exists: a warning
  naming that assumption, and none where the same code writes that name (`save_pretrained("gpt2")`) or where
  `load_dataset` names a builder Datasets ships (`json`, `csv`, `parquet`, `imagefolder`: it reads the files given);
- the same in the command of a container a custom resource describes inline, outside any pod template (Dynamo's
  `extraPodSpec.mainContainer`);
- `hf://` URIs in any field (KServe `storageUri`, Trainer initializers) and Ray Serve LLM `model_source`;
- `ollama pull NAME` and `ollama run NAME` (which pulls a model it lacks), and a `curl` to a server's `/api/pull`
  with `{"model": NAME}` (or the older `{"name": NAME}`), in a command, a script, a lifecycle hook or a ConfigMap
  script, the name read through the container's env and a shell `for` loop (`for m in $MODELS`, or over a bash
  array: `for m in "${MODELS[@]}"`).
  Ollama names a model `[namespace/]model[:tag][@digest]` and a missing tag is `latest`; the registry moves a tag to
  each new upload, so only a digest fixes the weights. A name still holding an unknown variable is not judged;
- a custom resource that describes a model (its kind, or the field's path, says `model`) naming a hub id in a
  model-naming field (`model`, `modelId`, `name`, `repo`, `source`...) with no `revision`/`commit`/`ref` beside
  it: a warning, since only its operator knows it pulls from the Hub.

Each must name a fixed revision (a commit or a release tag): `--revision`, `--model_revision`,
`--code-revision`, `revision=`, `REVISION` / `HF_MODEL_REVISION`, `hf://org/name:rev` or `@rev`, a
`git checkout` after the clone. No revision, or a branch (`main`, `master`), is reported. A local path
(`/models/x`, `./ckpt`, `models/x`) is not a hub pull; `--served-model-name` names, it does not pull.

## Why is this bad?
Without a revision the pull follows the repository's default branch, which its owner may rewrite at any
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

# Env a container reads its model from, by the images that read it, and the env that pins it.
MODEL_ENV = {"MODEL_ID": "REVISION", "HF_MODEL_ID": "HF_MODEL_REVISION"}
# Env names a program of the project's own reads a model id from (`os.environ["MODEL_ID"]` in a training or
# download script). Whether the program loads it from the Hub the files cannot show: a warning naming that, and only
# where the program loads models: its pod holds an accelerator or runs to completion, it is a Ray job's or Serve
# application's, or a revision variable sits beside the name. A web app's MODEL_ID or MODEL_NAME is usually the name
# it asks a model server for.
PROGRAM_MODEL_ENV = frozenset({"MODEL_ID", "MODEL_NAME", "MODEL", "BASE_MODEL", "HF_MODEL", "MODEL_REPO",
                               "MODEL_REPO_ID", "PRETRAINED_MODEL", "MODEL_NAME_OR_PATH"})
PROGRAM_MODELS_ENV = frozenset({"MODELS", "MODEL_IDS", "MODEL_NAMES", "MODEL_LIST"})
# The same names with a qualifier before them (`INITIAL_MODEL_REPO_ID`, `EMBEDDING_MODEL`, `DRAFT_MODEL_NAME`); a
# value naming an API provider's model (`openai/gpt-4o`) is no Hub pull.
QUALIFIED_MODEL_ENV = re.compile(r"^[A-Z0-9]+(?:_[A-Z0-9]+)*_MODEL(?:_ID|_NAME|_REPO|_REPO_ID)?$")
TGI = ("text-generation-inference", "text-generation-launcher", "huggingface-pytorch-tgi")


ALL_POSITIONAL = frozenset({'"$@"', "$@", '"${@}"', "${@}", "$*", '"$*"'})


def _words(node, positional: list[str] | None = None) -> list[str]:
    """A command's words, `"$@"` replaced by the words the script was given after its name."""
    words = [command_name(node), *command_words(node)]
    if positional is None:
        return words
    return [part for w in words for part in (positional if w in ALL_POSITIONAL else [w])]


def _fix(pull: Pull) -> str | None:
    return LLAMA_FIX if pull.revisionless else None


LLAMA_FIX = ("llama.cpp takes no revision: download the GGUF file at a commit (`hf download REPO FILE --revision "
             "COMMIT --local-dir DIR`, into a volume) and serve it with `-m DIR/FILE`")


def _message(o, where: str, pull: Pull, detail: str = "") -> str:
    what = f"the branch {pull.revision!r}" if pull.revision else "no revision"
    if pull.revisionless:
        what += " (llama.cpp fetches the main branch and has no revision option)"
    assumed = " (a name with no owner, read as the Hub's canonical repository, not a local directory)" \
        if pull.canonical else ""
    return (f"{o.kind} {o.name}: {where} pulls {pull.repo} from the Hugging Face Hub ({pull.how}) with {what}"
            f"{detail}{assumed}; it gets whatever the branch holds that day")


def _severity(pull: Pull) -> Severity | None:
    return Severity.WARNING if pull.canonical else None


def _container_pulls(o, pod_path: str, pod: dict, config_maps: dict[str, dict]) -> Iterator[Hit]:
    for field, i, c in containers(pod):
        base, name = f"{pod_path}.{field}.{i}", c.get("name", i)
        env = literal_env(c)
        # what `$(VAR)` in the arguments expands to: the literal env, or a ConfigMap of the same manifests
        resolved = known_env(c, config_maps)
        command = c.get("command") if isinstance(c.get("command"), list) else []
        args = c.get("args") if isinstance(c.get("args"), list) else []
        argv = [str(w) for w in (*command, *args)]
        if script_in(argv) is None:  # a shell script is read command by command below
            for pull in [*argv_pulls(argv, resolved), *entrypoint_pulls(c)]:
                if not pull.pinned:
                    yield Hit(_word_path(base, command, argv, pull.repo, resolved),
                              _message(o, f"container {name}", pull), obj=o, remediation=_fix(pull))
            for k, word in enumerate(argv):
                for _offset, pull in python_pulls(word, canonical=True):
                    if not pull.pinned:
                        yield Hit(_index_path(base, command, k), _message(o, f"container {name}", pull), obj=o,
                                  severity=_severity(pull))
            for tagged in ollama_pulls(argv, resolved):
                if not tagged.pinned:
                    yield Hit(_word_path(base, command, argv, tagged.name, resolved),
                              _ollama_message(o, f"container {name}", tagged), obj=o, remediation=OLLAMA_FIX)
        yield from _env_pulls(o, base, name, c, env, argv)
        if not _tgi(c, argv):
            named = {p.repo for p in argv_pulls(argv, resolved)} if not any(w.startswith("--revision") for w in argv) \
                else set(env.values())
            # finite work (a Job, a RayJob's entrypoint) reads its pods' env
            loads = bool(asked(c)) or for_finite_work(o, pod_path, pod)
            # the container's own env entries, a value from a ConfigMap of the set included (not what an envFrom
            # brings in bulk, which the program may never read); the script's pulls are the command's findings
            entries = {e["name"] for e in c.get("env") or [] if isinstance(e, dict) and isinstance(e.get("name"), str)}
            script = script_in(argv)
            if script is not None:
                named |= {p.repo for p in script_argv_pulls(resolve(argv[script[0]], resolved), resolved)}
            for var, pull in _program_env_pulls({k: v for k, v in resolved.items() if k in entries}, named, loads):
                if _names_a_local_path(var, " ".join(argv)):
                    continue
                index = next(j for j, e in enumerate(c["env"]) if isinstance(e, dict) and e.get("name") == var)
                at = f"{base}.env.{index}.value" if var in env else f"{base}.env.{index}.valueFrom"
                yield Hit(at, _message(o, f"container {name}", pull, PROGRAM_ASSUMED), obj=o,
                          severity=Severity.WARNING)


def _names_a_local_path(var: str, text: str) -> bool:
    """The command uses the variable, and only inside a local path (`vllm serve /data/$LLM_MODEL`) or as the name
    the server gives its model (`--served-model-name $LLM_MODEL`): the weights come from that path, not the Hub."""
    uses = list(re.finditer(rf"\$(?:\{{{re.escape(var)}\}}|\({re.escape(var)}\)|{re.escape(var)}\b)", text))
    return bool(uses) and all(text[:m.start()].endswith("/")
                              or re.search(r"--served-model-name[= ]+['\"]?$", text[:m.start()]) for m in uses)


PROGRAM_ASSUMED = " (assumed: the program loads the model its env names from the Hub)"
OLLAMA_FIX = ("stage the model once, where every pod reads it (a volume the pods share, or an image built with it), "
              "and record its digest (`ollama list`)")


def _ollama_message(o, where: str, pull: OllamaPull, detail: str = "") -> str:
    return (f"{o.kind} {o.name}: {where} pulls {pull.name} from the Ollama registry ({pull.how}) by its tag "
            f"{pull.tag!r}, not a digest{detail}; the registry moves a tag to each new upload, so pods started on "
            "different days serve different weights")


def _program_env_pulls(env: dict[str, str], named: set[str], loads: bool) -> Iterator[tuple[str, Pull]]:
    """(variable, pull) for each model-naming variable whose value is a hub id that the container's own command
    does not already pull (`--model $(MODEL_ID)` is the command's finding), pinned by any `*REVISION` or `*COMMIT`
    variable beside it; only where the program `loads` models or a revision variable says it does."""
    pins = [v for k, v in env.items() if "REVISION" in k.upper() or k.upper().endswith("COMMIT")]
    if not (loads or pins):
        return
    # any spelling of the name (`model_name`, as a Triton Python backend reads it from its environment)
    for var in sorted(k for k in env if k.upper() in PROGRAM_MODEL_ENV | PROGRAM_MODELS_ENV
                      or QUALIFIED_MODEL_ENV.match(k.upper())):
        # a list variable names several models, separated by commas (`MODELS: "org/a,org/b"`)
        for repo in env[var].split(",") if var.upper() in PROGRAM_MODELS_ENV else [env[var]]:
            repo = repo.strip()
            if hub_repo(repo) and repo not in named and repo.split("/", 1)[0].lower() not in API_PROVIDERS:
                pull = Pull(repo, f"env {var}", pins[0] if pins else None)
                if not pull.pinned:
                    yield var, pull


def _tgi(c: dict, argv: list[str]) -> bool:
    return any(t in str(c.get("image", "")) for t in TGI) or any(
        posixpath.basename(w) == "text-generation-launcher" for w in argv[:1])


def _inline_container_pulls(ctx) -> Iterator[Hit]:
    """The commands of containers a custom resource describes inline (Dynamo's `mainContainer`): a server's
    `--model ORG/NAME` there is the same pull as in a pod template."""
    for o in ctx.objects:
        for base, c in inline_commands(o):
            env = literal_env(c)
            command = c.get("command") if isinstance(c.get("command"), list) else []
            argv = [str(w) for w in (*command, *(c.get("args") if isinstance(c.get("args"), list) else []))]
            if script_in(argv) is not None:
                continue
            for pull in argv_pulls(argv, env):
                if not pull.pinned:
                    yield Hit(_word_path(base, command, argv, pull.repo, env),
                              _message(o, f"container {c.get('name') or base.removeprefix('spec.')}", pull), obj=o)


def _env_pulls(o, base: str, name, c: dict, env: dict[str, str], argv: list[str]) -> Iterator[Hit]:
    tgi = _tgi(c, argv)
    for var, pin in MODEL_ENV.items():
        if var == "MODEL_ID" and not tgi:
            continue  # only TGI's launcher reads MODEL_ID
        repo = env.get(var)
        if repo and hub_repo(repo) and not any(w.startswith("--revision") for w in argv):
            pull = Pull(repo, f"env {var}", env.get(pin))
            if not pull.pinned:
                index = next(j for j, e in enumerate(c["env"]) if isinstance(e, dict) and e.get("name") == var)
                yield Hit(f"{base}.env.{index}.value", _message(o, f"container {name}", pull, f" (set {pin})"),
                          obj=o)
    pull = llama_env_pull(env)
    if pull:
        index = next(j for j, e in enumerate(c["env"]) if isinstance(e, dict) and e.get("name") == LLAMA_HUB_ENV)
        yield Hit(f"{base}.env.{index}.value", _message(o, f"container {name}", pull), obj=o, remediation=LLAMA_FIX)


def _index_path(base: str, command: list, k: int) -> str:
    return f"{base}.command.{k}" if k < len(command) else f"{base}.args.{k - len(command)}"


def _word_path(base: str, command: list, argv: list[str], repo: str, env: dict[str, str]) -> str:
    k = next((j for j, w in enumerate(argv) if repo in resolve(w, env)), None)
    return _index_path(base, command, k) if k is not None else base


def _script_pulls(ctx) -> Iterator[Hit]:
    config_maps = config_map_data(ctx)
    for s in scripts(ctx):
        env = known_env(s.container, config_maps) if isinstance(s.container, dict) else {}
        env = {**env, **assigned(s.root)}  # `MODEL=org/name; vllm serve "$MODEL"`: the script's own variables
        reported: set[str] = set()  # `ollama pull M` then `ollama run M` is one pull of M
        positional = list(s.positional)
        for node in commands_in(s.root):
            for pull in argv_pulls(_words(node, positional), env):
                if not pull.pinned and not (pull.how == "git clone" and _checked_out_later(s.root, node)):
                    yield Hit(s.path, _message(s.obj, s.where, pull, f" (script line {s.line_of(node)})"), obj=s.obj,
                              remediation=_fix(pull))
            for tagged in script_ollama_pulls(node, env):
                if not tagged.pinned and tagged.name not in reported:
                    reported.add(tagged.name)
                    yield Hit(s.path, _ollama_message(s.obj, s.where, tagged, f" (script line {s.line_of(node)})"),
                              obj=s.obj, remediation=OLLAMA_FIX)
        for offset, pull in python_pulls(s.source, canonical=True):
            if not pull.pinned:
                line = s.source[:offset].count("\n") + 1
                yield Hit(s.path, _message(s.obj, s.where, pull, f" (script line {line})"), obj=s.obj,
                          severity=_severity(pull))


def _checked_out_later(root, clone) -> bool:
    """A `git checkout REV` / `git reset --hard REV` after the clone pins it."""
    for node in commands_in(root):
        words = command_words(node)
        if node.start_byte > clone.start_byte and command_name(node) == "git" and (
                "checkout" in words or ("reset" in words and "--hard" in words)):
            return True
    return False


def _configmap_pulls(ctx) -> Iterator[Hit]:
    run = {s.config_map for s in scripts(ctx) if s.config_map}  # read where a container runs them, with its env
    for o in ctx.of_kind("ConfigMap"):
        data = o.obj.get("data") if isinstance(o.obj.get("data"), dict) else {}
        for key, text in data.items():
            if not isinstance(text, str) or (o.name, str(key)) in run:
                continue
            found = [p for _off, p in python_pulls(text, canonical=True)]
            tagged: list[OllamaPull] = []
            if str(key).endswith(".sh") or text.startswith("#!"):
                for node in commands_in(parse(text).root_node):
                    found += argv_pulls(_words(node), {})
                    tagged += script_ollama_pulls(node, {})
            for pull in found:
                if not pull.pinned:
                    yield Hit(f"data.{key}", _message(o, f"script {key}", pull), obj=o, severity=_severity(pull),
                              remediation=_fix(pull))
            for field, pull in config_text_pulls(text, f"{o.name}/{key}"):
                if not pull.pinned:
                    yield Hit(f"data.{key}", _message(o, f"config {key}", pull, f" ({field}; {PINNED_BY[pull.how]} "
                                                      "pins it)"), obj=o)
            named: set[str] = set()  # one finding per model: its first pull
            for pull in tagged:
                if not pull.pinned and pull.name not in named:
                    named.add(pull.name)
                    yield Hit(f"data.{key}", _ollama_message(o, f"script {key}", pull), obj=o, remediation=OLLAMA_FIX)


def _uri_pulls(ctx) -> Iterator[Hit]:
    for o in ctx.objects:
        if o.kind == "Secret":
            continue
        for path, text in ctx.object_strings(o):
            for pull in uri_pulls(text):
                if not pull.pinned:
                    yield Hit(path, _message(o, "a field", pull, _uri_pin(o)), obj=o)


MODEL_KEYS = frozenset({"model", "modelid", "model_id", "modelname", "model_name", "name", "repo", "repoid",
                        "repo_id", "source"})
PIN_KEYS = ("revision", "commit", "ref", "sha")


def _custom_resource_models(ctx) -> Iterator[Hit]:
    """A custom resource that describes a model (its kind or the field's path says so) and names a hub id in a
    model-naming field, with no revision beside it: its operator most likely pulls it from the Hub."""
    for o in ctx.objects:
        group = str(o.obj.get("apiVersion", "")).split("/")[0]
        if "." not in group or group.endswith(("k8s.io", "ray.io")) or o.kind in ("RayService",):
            continue
        yield from _model_fields(o, o.obj.get("spec"), "spec", "model" in o.kind.lower())


def _model_fields(o, node, path: str, model_kind: bool) -> Iterator[Hit]:
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _model_fields(o, item, f"{path}.{i}", model_kind)
        return
    if not isinstance(node, dict) or path.endswith(("template", "containers", "env")):
        return  # pod templates are read as pods
    pinned = any(str(k).lower().endswith(PIN_KEYS) and node[k] for k in node)
    for key, value in node.items():
        here = f"{path}.{key}"
        if isinstance(value, str) and str(key).lower() in MODEL_KEYS and hub_repo(value) and not pinned and (
                model_kind or "model" in here.lower()):
            yield Hit(here, f"{o.kind} {o.name}: {here} names {value.strip()}, a Hugging Face Hub id, with no revision "
                      "beside it (assumed: the operator pulls it from the Hub; it gets whatever the branch holds "
                      "that day)", obj=o, severity=Severity.WARNING)
        elif isinstance(value, dict | list):
            yield from _model_fields(o, value, here, model_kind)


def _uri_pin(o) -> str:
    """KServe's storage initializer reads `hf://org/name:revision`; other readers (Kubeflow Trainer's initializers)
    take no revision in the URI."""
    if str(o.obj.get("apiVersion", "")).startswith("serving.kserve.io/"):
        return " (hf://org/name:REVISION pins it)"
    return " (this field names no revision: stage the repository at a fixed commit and point the field at the copy)"


def _serve_llm_pulls(ctx) -> Iterator[Hit]:
    """Ray Serve LLM (`ray.serve.llm`): each llm_config loads `model_loading_config.model_source` (or, without
    it, `model_id`); `engine_kwargs.revision` pins it."""
    for o in ctx.of_kind("RayService"):
        for source, revision in serve_llm_models(o):
            if hub_repo(source):
                pull = Pull(source, "Ray Serve LLM model_source", revision)
                if not pull.pinned:
                    yield Hit("spec.serveConfigV2", _message(o, "serveConfigV2", pull,
                                                             " (engine_kwargs.revision pins it)"), obj=o)


def _runtime_env_pulls(ctx) -> Iterator[Hit]:
    """The env_vars of a RayJob's `runtimeEnvYAML` (its entrypoint's environment) and of each Serve application's
    `runtime_env` in a RayService's `serveConfigV2`: programs that load models."""
    for o in ctx.of_kind("RayJob", "RayService"):
        for field, env in runtime_env_vars(o):
            for var, pull in _program_env_pulls(env, set(), loads=True):
                yield Hit(f"spec.{field}", _message(o, f"{field} env_vars {var}", pull, PROGRAM_ASSUMED), obj=o,
                          severity=Severity.WARNING)


def _configmap_env_pulls(ctx) -> Iterator[Hit]:
    """A ConfigMap of env (what `envFrom` loads) that names a model the way a program's env does."""
    for o in ctx.of_kind("ConfigMap"):
        data = o.obj.get("data") if isinstance(o.obj.get("data"), dict) else {}
        env = {str(k): str(v) for k, v in data.items() if isinstance(v, str | int | float)}
        for var, pull in _program_env_pulls(env, set(), loads=False):
            yield Hit(f"data.{var}", _message(o, f"key {var}", pull, PROGRAM_ASSUMED), obj=o,
                      severity=Severity.WARNING)


def check(ctx) -> Iterator[Hit]:
    seen: set[tuple] = set()
    config_maps = config_map_data(ctx)
    hits = [*(h for o, pod_path, pod in ctx.pod_templates() for h in _container_pulls(o, pod_path, pod, config_maps)),
            *_script_pulls(ctx), *_configmap_pulls(ctx), *_uri_pulls(ctx), *_serve_llm_pulls(ctx),
            *_runtime_env_pulls(ctx), *_configmap_env_pulls(ctx), *_inline_container_pulls(ctx),
            *_custom_resource_models(ctx)]
    for hit in hits:
        key = (id(hit.obj), hit.key_path, hit.message)
        if key not in seen:
            seen.add(key)
            yield hit
