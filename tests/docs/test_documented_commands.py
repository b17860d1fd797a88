"""Every command the documentation shows is run or checked here (convention: tests/docs/commands.py and
docs/contributing.md). Prevents the reviewed failure: a quickstart command that exited 2 and three documented
commands that aborted, with no test running them.

How each command is verified (`pytest tests/docs -v -s` lists every one with its verdict):
- RUN: grpo-lint, grpo-render (incl. --job), `helm template` / `helm lint` (real helm from $GRPO_HELM or PATH;
  skipped, saying so, when absent), recipes/grpo/run-on-cluster.sh with --dry-run against the recording kubectl
  shim (tests/recipes/kubectl_shim.py: NOT a cluster), `make -n TARGET`; exit 0 and no error text.
- CHECKED: commands that need a cluster or are a long job (kubectl, helm install/upgrade/test, ray, make test,
  scripts): `bash -n` syntax, and every flag looked up in the tool's own --help (kubectl/helm from
  $GRPO_KUBECTL/$GRPO_HELM or PATH, ray and our tools from this venv); a script's own syntax with bash -n.
- PARSED: a command of this repository's tools that needs the cluster's files (grpo-data, grpo-models, grpo-eval,
  also inside `kubectl exec … -- CMD`, as NOTES prints them) goes through the installed console script's own
  argparse parser with its exact words, and stops there (tests/docs/parse_only.py): a missing or extra
  positional, a wrong subcommand or a bad choice exits 2 here as it would in the pod. Where it stops: what the
  command does after parsing (the files it reads on the volume) is not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, VALUES_FILES
from tests.docs.commands import Command, markdown_commands, notes_commands

VENV_BIN = Path(sys.executable).parent
RELEASE, NAMESPACE = "grpo", "grpo"
ERROR_TEXT = re.compile(r"Traceback|command not found|No such file|unknown (argument|flag|command)|\berror:|^usage:",
                        re.IGNORECASE | re.MULTILINE)
RUN_TOOLS = ("grpo-lint", "grpo-render")
RECIPE = "recipes/grpo/run-on-cluster.sh"


def documents() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")),
            *sorted((REPO_ROOT / "images").glob("**/README.md"))]


def collect() -> list[Command]:
    default = str(VALUES_FILES[0].relative_to(REPO_ROOT))
    out = [c for doc in documents() for c in markdown_commands(doc, REPO_ROOT, default)]
    from grpo_stack.render import render
    from grpo_stack.values import load_values_file

    for values in VALUES_FILES:
        notes = render(load_values_file(values).data, release=RELEASE, namespace=NAMESPACE).notes
        out += notes_commands(notes, str(values.relative_to(REPO_ROOT)), RELEASE, NAMESPACE)
    return out


COMMANDS = collect()


def tool(name: str) -> str | None:
    """A binary for `name`: $GRPO_<NAME> (e.g. the real helm the chart tests install), this venv, PATH."""
    env = os.environ.get(f"GRPO_{name.upper()}")
    if env:
        return env
    local = VENV_BIN / name
    return str(local) if local.exists() else shutil.which(name)


def env_for_run(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}", "XDG_CACHE_HOME": str(tmp_path / "cache")}


def run(cmd: str, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def assert_clean(proc: subprocess.CompletedProcess, command: Command) -> None:
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{command.source}: `{command.text}` exited {proc.returncode}\n{text[-3000:]}"
    bad = ERROR_TEXT.search(text)
    assert not bad, f"{command.source}: `{command.text}` printed {bad.group()!r}\n{text[-3000:]}"


@cache
def help_text(binary: str, *sub: str) -> str:
    words = [binary, *sub, "--help"]
    proc = subprocess.run(words, capture_output=True, text=True, timeout=60, check=False)
    text = proc.stdout + proc.stderr
    if Path(binary).name == "kubectl":  # global flags are listed by `kubectl options`
        text += subprocess.run([binary, "options"], capture_output=True, text=True, timeout=60).stdout
    return text


# Flags that take a separate value, to find the subcommand words of `kubectl -n NS wait ...`.
VALUE_FLAGS = {"-n", "--namespace", "-f", "--values", "-l", "--selector", "-o", "--output", "--context",
               "--kube-context", "--timeout", "--version"}


def split_flags(words: list[str]) -> tuple[list[str], list[str]]:
    """(subcommand words, flags) of a command line after the program name: `-n grpo create secret generic x
    --from-literal=...` -> ([create, secret, generic, x], [-n, --from-literal])."""
    sub, flags, skip = [], [], False
    for w in words:
        if skip:
            skip = False
        elif w.startswith("-"):
            flags.append(w.split("=", 1)[0])
            skip = "=" not in w and w in VALUE_FLAGS
        elif len(sub) < 4 and re.fullmatch(r"[a-z][a-z-]*", w):
            sub.append(w)
    return sub, flags


PARSED_TOOLS = ("grpo-data", "grpo-models", "grpo-eval", "grpo-images", "grpo-cluster", "grpo-run")
FLAG_TOOLS = ("kubectl", "helm", "ray", *RUN_TOOLS, *PARSED_TOOLS)
PARSE_ONLY = Path(__file__).with_name("parse_only.py")


def parse_only(words: list[str]) -> subprocess.CompletedProcess:
    """The installed console script `words[0]` parsing `words[1:]`, stopped right after parsing."""
    return subprocess.run([sys.executable, str(PARSE_ONLY), *words], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"})


def check_arguments(command: Command, words: list[str], report: list[str]) -> None:
    """Our tools' commands (top level or in a pod) must pass their own argument parser."""
    if not words or Path(words[0]).name not in PARSED_TOOLS:
        return
    proc = parse_only([Path(words[0]).name, *words[1:]])
    assert proc.returncode == 0 and "ARGUMENTS PARSED" in proc.stdout, (
        f"{command.source}: `{command.text}`: {words[0]} refuses its arguments (exit {proc.returncode}):\n"
        f"{(proc.stdout + proc.stderr)[-2000:]}")
    report.append(f"arguments parsed by the installed {words[0]}")


def check_flags(command: Command, report: list[str]) -> None:
    """Every flag of the command exists in the tool's --help for its subcommand; for `kubectl exec POD -- CMD`
    kubectl's flags are kubectl's, and the command run in the pod is checked against its own tool."""
    words = command.words
    if words and Path(words[0]).name == "kubectl" and "--" in words:
        cut = words.index("--")
        _check_tool_flags(command, words[:cut], report)
        _check_tool_flags(command, words[cut + 1:], report)
        check_arguments(command, words[cut + 1:], report)
        return
    _check_tool_flags(command, words, report)
    check_arguments(command, words, report)


def _check_tool_flags(command: Command, words: list[str], report: list[str]) -> None:
    if not words:
        return
    name = Path(words[0]).name
    if name not in FLAG_TOOLS:
        report.append(f"flags not checked: {name} is not one of the tools this test knows")
        return
    binary = tool(name)
    if binary is None:
        report.append(f"flags not checked: no {name} binary here (set GRPO_{name.upper()})")
        return
    sub, flags = split_flags(words[1:])
    for depth in range(len(sub), -1, -1):  # the deepest subcommand whose help exists
        text = help_text(binary, *sub[:depth])
        if "unknown command" not in text.lower():
            break
    missing = [f for f in flags if not re.search(rf"(^|[\s,]){re.escape(f)}([\s=,\[]|$)", text, re.MULTILINE)]
    assert not missing, f"{command.source}: `{command.text}`: {name} {' '.join(sub)} has no {missing}"
    report.append(f"flags {flags or '[]'} found in `{name} {' '.join(sub[:depth])} --help`")


def recipe_dry_run(command: Command, tmp_path: Path) -> subprocess.CompletedProcess:
    """The recipe with --dry-run against the recording kubectl shim, the cluster state derived from the chart
    render of the command's values file (release and namespace as documented)."""
    from grpo_stack.render import job_spec, render
    from grpo_stack.values import load_values_file

    words = command.words
    release = words[words.index("--release") + 1] if "--release" in words else RELEASE
    namespace = words[words.index("--namespace") + 1] if "--namespace" in words else NAMESPACE
    rendered = render(load_values_file(REPO_ROOT / command.values).data, release=release, namespace=namespace)
    rc = rendered.of_kind("RayCluster")[0]
    labels = {"ray.io/cluster": rc.name}
    replicas = [g["replicas"] for g in rc.obj["spec"]["workerGroupSpecs"]]
    pods = [{"name": f"{rc.name}-head", "namespace": namespace, "ready": True,
             "labels": {**labels, "ray.io/node-type": "head"}}]
    pods += [{"name": f"{rc.name}-worker-{i}", "namespace": namespace, "ready": True,
              "labels": {**labels, "ray.io/node-type": "worker"}} for i in range(sum(replicas))]
    configmaps = [{"name": o.name, "namespace": namespace, "labels": o.obj["metadata"]["labels"],
                   "data": o.obj["data"]} for o in rendered.of_kind("ConfigMap")
                  if "job.json" in (o.obj.get("data") or {})]
    state = {"rayclusters": [{"name": rc.name, "namespace": namespace, "replicas": replicas,
                              "labels": rc.obj["metadata"]["labels"]}], "pods": pods, "configmaps": configmaps}
    shim_bin = tmp_path / "bin"
    shim_bin.mkdir()
    kubectl = shim_bin / "kubectl"
    shim = REPO_ROOT / "tests" / "recipes" / "kubectl_shim.py"
    kubectl.write_text(f'#!/bin/sh\nexec {sys.executable} {shim} "$@"\n')
    kubectl.chmod(0o755)
    (tmp_path / "state.json").write_text(json.dumps(state))
    # The pod's mount holds what the release's ConfigMap holds (the submit refuses a stale one).
    mounted = configmaps[0]["data"]["job.json"] if configmaps else json.dumps(job_spec(rendered))
    (tmp_path / "job.json").write_text(mounted)
    env = {**env_for_run(tmp_path), "KUBECTL_SHIM_STATE": str(tmp_path / "state.json"),
           "KUBECTL_SHIM_LOG": str(tmp_path / "calls.log"), "KUBECTL_SHIM_ROOT": str(tmp_path / "pod"),
           "GRPO_JOB_SPEC": str(tmp_path / "job.json"), "PATH": f"{shim_bin}:{env_for_run(tmp_path)['PATH']}"}
    text = command.text if "--dry-run" in words else f"{command.text.split('#')[0].rstrip()} --dry-run"
    return run(text, env)


def verify(command: Command, tmp_path: Path) -> str:
    """Run or check one command; returns the verdict line."""
    syntax = subprocess.run(["bash", "-n", "-c", command.text], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, f"{command.source}: `{command.text}`: {syntax.stderr}"
    for script in inner_scripts(command.words):  # `kubectl exec … -- sh -c '…'`: the script the pod's shell runs
        inner = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, check=False)
        assert inner.returncode == 0, f"{command.source}: the script of its `-c`, `{script}`: {inner.stderr}"
    words = command.words
    if not words:
        return "CHECKED syntax (no command)"
    name = words[0]
    if command.unfilled:
        report = [f"check only: placeholder(s) {command.unfilled}"]
        check_flags(command, report)
        return "CHECKED syntax; " + "; ".join(report)
    if name in RUN_TOOLS and words[1:3] == ["crd", "fetch"]:
        # The download itself goes to GitHub, which tests cannot reach: the same command with --url naming the
        # schema the package ships (a file: URL; the HTTP path is tests/lint/test_kuberay_crd.py).
        from grpo_stack.kuberay_crd import shipped_path

        text = f"{command.text.split('#')[0].rstrip()} --url {shipped_path().as_uri()}"
        assert_clean(run(text, env_for_run(tmp_path)), command)
        return "RAN with --url file:<the shipped CRD> (no GitHub here), exit 0"
    if name in RUN_TOOLS:
        assert_clean(run(command.text, env_for_run(tmp_path)), command)
        return "RAN exit 0"
    if name == RECIPE or name.endswith("/run-on-cluster.sh"):
        assert_clean(recipe_dry_run(command, tmp_path), command)
        return "RAN with --dry-run against the kubectl shim (not a cluster), exit 0"
    if name == "helm" and len(words) > 1 and words[1] in ("template", "lint"):
        helm = tool("helm")
        if helm is None:
            return "SKIPPED: no helm binary (set GRPO_HELM to the real helm the chart tests install)"
        assert_clean(run(f"{shlex_quote(helm)} {command.text.split(None, 1)[1]}", env_for_run(tmp_path)), command)
        return f"RAN with {helm}, exit 0"
    if name == "make":
        targets = [w for w in words[1:] if not w.startswith("-")]
        proc = run(f"make -n {' '.join(targets)}", env_for_run(tmp_path))
        assert proc.returncode == 0, f"{command.source}: make target(s) {targets}: {proc.stderr[-2000:]}"
        return f"CHECKED `make -n {' '.join(targets)}` (a long job: not run here)"
    report = []
    if name == "bash" and len(words) > 1 and (REPO_ROOT / words[1]).is_file():
        proc = subprocess.run(["bash", "-n", str(REPO_ROOT / words[1])], capture_output=True, text=True)
        assert proc.returncode == 0, f"{command.source}: {words[1]}: {proc.stderr}"
        report.append(f"bash -n {words[1]} ok")
    elif name not in ("bash", "python", "cd", "export") and "=" not in name:
        check_flags(command, report)
    return "CHECKED syntax (needs a cluster or a long job); " + "; ".join(report)


def inner_scripts(words: list[str]) -> list[str]:
    """The scripts a command hands to a shell: the word after `-c` (or a flag cluster ending in c, `-ec`) of each
    `sh` / `bash` in it."""
    out = []
    for i, word in enumerate(words[:-2]):
        flag = words[i + 1]
        if Path(word).name in ("sh", "bash") and flag.startswith("-") and not flag.startswith("--") \
                and flag.endswith("c"):
            out.append(words[i + 2])
    return out


def test_a_shell_script_inside_a_command_is_checked():
    """A broken script behind `-- sh -c` passes `bash -n` of the outer command (it is one quoted word)."""
    assert inner_scripts(["kubectl", "exec", "x", "--", "sh", "-ec", "if true; then echo"]) == ["if true; then echo"]
    broken = subprocess.run(["bash", "-n", "-c", "if true; then echo"], capture_output=True, text=True)
    assert broken.returncode != 0


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c.source} {c.text[:60]}")
def test_documented_command(command, tmp_path, capsys):
    verdict = verify(command, tmp_path)
    with capsys.disabled():
        print(f"\n  {command.source}: {command.text}\n    -> {verdict}")


def test_every_fenced_block_names_its_language():
    """A command in an untagged block is never collected, so never checked: every block says what it holds
    (`bash` for commands, `text` for output and diagrams, `yaml`, ...)."""
    untagged = []
    for doc in documents():
        inside = False
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                if not inside and not line.strip()[3:].strip():
                    untagged.append(f"{doc.relative_to(REPO_ROOT)}:{n}")
                inside = not inside
    assert not untagged, f"fenced blocks without a language: {untagged}"


def test_commands_were_found():
    """The collection itself works: the README quickstart and each NOTES.txt contribute commands."""
    sources = {c.source.split(":")[0] for c in COMMANDS}
    assert "README.md" in sources
    assert {f"NOTES.txt({p.stem})" for p in VALUES_FILES} <= sources
    assert any(c.words[:1] == ["grpo-render"] for c in COMMANDS if c.source.startswith("NOTES"))
