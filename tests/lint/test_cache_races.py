"""The lint cache under a file replaced while grpo-lint runs (issue: the hash was taken after linting, so the old
file's verdict was stored under the new file's hash and a broken file passed, exit 0, on every cached run).

Each keyed input (a values file, a manifest, `--base`, `--config`, `--kuberay-crd`) is replaced by a real
`rename(2)` mid-run, between the cache's hashing and the linter's reading; afterwards a cached run over the file as
it now is, and over the content it had before, must print and exit exactly as an uncached one."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from grpo_stack import filereader, objectschema, values
from grpo_stack.cli.lint import main
from grpo_stack.lint import release, suppress

from tests.conftest import REPO_ROOT
from tests.lint.fixtures import FIXTURES

POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: team}\nspec:\n  containers:\n"
       "    - name: app\n      image: registry.example/team/app:prod\n      imagePullPolicy: IfNotPresent\n")
RAYCLUSTER = ("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\n"
              "spec:\n  headGroupSpec:\n    rayStartParams: {}\n    noSuchField: 1\n"
              "    template: {spec: {containers: [{name: ray-head, image: 'r:1'}]}}\n")
CLEAN_VALUES = "global:\n  storage:\n    mountPath: /fsx\n"
BAD_VALUES = "global:\n  storage:\n    mountPath: 5\n"
SHARED = ("base", "config", "crd")  # hashed into every key before linting starts


def lint(capsys, argv: list[str]) -> tuple[int, str]:
    objectschema.crd_validator.cache_clear()  # in one process, a CRD path whose file changed must be read again
    objectschema.forget_validated()
    code = main(["--format", "json", *argv])
    out = capsys.readouterr()
    return code, out.out


def replace_mid_run(monkeypatch, which, target, replacement) -> list[str]:
    """Rename `replacement` over `target` where a replaced file falls between its hashing and its reading: a
    shared input just before the linter reads it (after the cache hashed it), a linted file once linting is done
    (before the run ends). Returns when it happened."""
    done: list[str] = []

    def swap(moment):
        if not done:
            os.rename(replacement, target)
            done.append(moment)

    if which in SHARED:
        def reading(real):
            def read_text(path, *args, **kwargs):
                if os.fspath(path) == str(target):
                    swap("as the linter reads it")
                return real(path, *args, **kwargs)
            return read_text

        for module in (filereader, values, suppress):  # every reader of a shared input, by its own name
            monkeypatch.setattr(module, "read_text", reading(module.read_text))
    else:
        real_lint = release.lint_units

        def linting(*args, **kwargs):
            units = real_lint(*args, **kwargs)
            swap("after linting")
            return units

        monkeypatch.setattr(release, "lint_units", linting)
    return done


def crd_allowing_no_such_field(crd_file, path):
    data = json.loads(crd_file.read_text())
    data["versions"]["v1"]["properties"]["spec"]["properties"]["headGroupSpec"]["properties"]["noSuchField"] = {
        "type": "integer"}
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("which", ["values", "manifest", "base", "config", "crd"])
def test_a_file_replaced_mid_run_never_files_its_old_verdict_under_the_new_content(
        capsys, tmp_path, monkeypatch, raycluster_crd, which):
    old, new = tmp_path / "old", tmp_path / "new"
    if which == "values":
        target, argv = tmp_path / "values.yaml", []
        old.write_text(CLEAN_VALUES)
        new.write_text(BAD_VALUES)
        argv = [str(target)]
    elif which == "manifest":
        target = tmp_path / "m.yaml"
        shutil.copy(FIXTURES / "GRPO850" / "bad-mixed-namespaces.yaml", new)
        old.write_text(POD.replace(":prod", "@sha256:" + "a" * 64))
        argv = [str(target)]
    elif which == "base":
        target = tmp_path / "base.yaml"
        shutil.copy(REPO_ROOT / "values" / "qwen3-235b.yaml", old)
        new.write_text(old.read_text() + BAD_VALUES.replace("global:\n", "global:\n  __typo: 1\n", 1))
        values = tmp_path / "values.yaml"
        values.write_text(CLEAN_VALUES)
        argv = ["--base", str(target), str(values)]
    elif which == "config":
        target = tmp_path / "lint.yaml"
        old.write_text("image-pinning:\n  floating: ['registry.example/*:prod']\n")
        new.write_text("image-pinning:\n  pinned: ['registry.example/*:prod']\n")
        pod = tmp_path / "pod.yaml"
        pod.write_text(POD)
        argv = ["--config", str(target), "--select", "GRPO701", str(pod)]
    else:
        target = tmp_path / "crd.json"
        shutil.copy(raycluster_crd, old)
        crd_allowing_no_such_field(raycluster_crd, new)
        manifest = tmp_path / "rc.yaml"
        manifest.write_text(RAYCLUSTER)
        argv = ["--kuberay-crd", str(target), "--select", "GRPO002", str(manifest)]
    shutil.copy(new, tmp_path / "probe")
    shutil.copy(old, target)
    before = lint(capsys, ["--no-cache", *argv])
    os.replace(tmp_path / "probe", target)
    after = lint(capsys, ["--no-cache", *argv])
    assert before != after, "the two contents must lint differently for this test to mean anything"
    shutil.copy(old, target)

    with monkeypatch.context() as patch:
        moment = replace_mid_run(patch, which, target, new)
        lint(capsys, argv)  # the run during which the file is replaced (its own answer may be either)
    assert moment and target.read_text() != old.read_text()
    assert lint(capsys, argv) == after  # cached run over the file as it is now
    shutil.copy(old, target)  # and back to the content the cache hashed before that run
    assert lint(capsys, argv) == before
