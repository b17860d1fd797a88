"""The KubeRay CRD: shipped inside the package (grpo_stack/crds) and used by default; downloaded once into the user
cache (`grpo-lint crd fetch`, tested against a loopback HTTP server serving the shipped schema); found from
--kuberay-crd / $GRPO_KUBERAY_CRD / the cache / the package, and never skipped silently.

Prevents the reviewed failure: the RayCluster CRD check was silently skipped when the schema was not found
beside the checkout."""

from __future__ import annotations

import json

import pytest
from grpo_stack.cli.lint import main

from tests.conftest import REPO_ROOT
from tests.lint.conftest import crd_wrapping

VALUES = str(REPO_ROOT / "values" / "qwen3-8b.yaml")
NOTE = "not checked against the KubeRay CRD"


@pytest.fixture
def server(crd_file, serve):
    """127.0.0.1 only: /reduced.json is the reference file as it is, /crd.yaml the same schema wrapped in a
    CustomResourceDefinition like the release's file; every request is counted."""
    reduced = crd_file.read_bytes()
    crd = crd_wrapping(json.loads(reduced)["versions"]["v1"])
    return serve({"/reduced.json": reduced, "/crd.yaml": crd, "/not-a-crd.yaml": b"kind: ConfigMap\n"})


def lint(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out, out.err


@pytest.mark.parametrize("name", ["crd.yaml", "reduced.json"])
def test_fetch_downloads_once_then_lint_uses_it(capsys, cache, server, name):
    url, hits = server
    code, out, _ = lint(capsys, "crd", "fetch", "--url", f"{url}/{name}")
    assert code == 0 and out.startswith("downloaded:")
    code, out, _ = lint(capsys, "crd", "fetch", "--url", f"{url}/{name}")
    assert code == 0 and out.startswith("already cached:") and hits == [f"/{name}"]
    code, out, _ = lint(capsys, "crd", "path")
    assert code == 0 and out.strip().startswith(str(cache))
    code, out, err = lint(capsys, VALUES)
    assert code == 0 and NOTE not in err, out + err


def test_fetch_errors_are_input_errors_and_cache_nothing(capsys, cache, server):
    url, _ = server
    for bad in (f"{url}/missing", f"{url}/not-a-crd.yaml", "http://127.0.0.1:9/refused"):
        code, _, err = lint(capsys, "crd", "fetch", "--url", bad)
        assert code == 2 and "grpo-lint:" in err, err
    assert not list(cache.rglob("*.json"))


def test_shipped_crd_is_used_without_cache_or_flag(capsys, cache, crd_file):
    code, _, err = lint(capsys, VALUES, VALUES)
    assert code == 0 and NOTE not in err, err
    code, out, _ = lint(capsys, "crd", "path")
    assert code == 0 and out.strip() == str(crd_file)


def test_without_any_crd_the_output_says_so_once(capsys, cache, monkeypatch, tmp_path):
    """An install that lost its package data (e.g. a vendored copy of the modules alone)."""
    from grpo_stack import kuberay_crd

    monkeypatch.setattr(kuberay_crd, "SHIPPED_DIR", tmp_path / "no-package-data")
    code, _, err = lint(capsys, VALUES, VALUES)
    assert code == 0 and err.count(NOTE) == 1, err
    assert lint(capsys, "crd", "path")[0] == 1


def test_crd_from_flag_and_env(capsys, cache, crd_file, monkeypatch):
    code, _, err = lint(capsys, "--kuberay-crd", str(crd_file), VALUES)
    assert code == 0 and NOTE not in err
    monkeypatch.setenv("GRPO_KUBERAY_CRD", str(crd_file))
    code, _, err = lint(capsys, VALUES)
    assert code == 0 and NOTE not in err


def test_crd_catches_a_field_kuberay_does_not_have(capsys, cache, crd_file, tmp_path, monkeypatch):
    """With the CRD (given, or the shipped one) a RayCluster field KubeRay does not know is a GRPO002 finding;
    without any, only the pod templates are checked (and the note says so)."""
    from grpo_stack import kuberay_crd

    manifest = tmp_path / "rc.yaml"
    manifest.write_text("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\n"
                        "spec:\n  headGroupSpec:\n    rayStartParams: {}\n    noSuchField: 1\n"
                        "    template: {spec: {containers: [{name: ray-head, image: 'r:1'}]}}\n")
    code, out, _ = lint(capsys, "--kuberay-crd", str(crd_file), "--select", "GRPO002", str(manifest))
    assert code == 1 and "noSuchField" in out
    code, out, _ = lint(capsys, "--select", "GRPO002", str(manifest))
    assert code == 1 and "noSuchField" in out
    monkeypatch.setattr(kuberay_crd, "SHIPPED_DIR", tmp_path / "no-package-data")
    code, out, err = lint(capsys, "--select", "GRPO002", str(manifest))
    assert code == 0 and err.count(NOTE) == 1


def test_bad_crd_file_is_an_input_error(capsys, cache, tmp_path):
    bad = tmp_path / "crd.json"
    bad.write_text("{not json")
    code, _, err = lint(capsys, "--kuberay-crd", str(bad), VALUES)
    assert code == 2 and str(bad) in err
