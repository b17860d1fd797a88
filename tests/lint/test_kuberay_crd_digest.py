"""`grpo-lint crd fetch --url` knows what it downloaded by the pinned digest of its RayCluster schema (issue: it
stored whatever the URL served as v1.7.0, then blamed the chart for the differences). A CRD file carries no
version: the targeted release's schema becomes the default, another known release or any other schema is cached
apart, said so, and used only when named with --kuberay-crd. Loopback HTTP server, in-process CLI."""

from __future__ import annotations

import json

import pytest
from grpo_stack import kuberay_crd

from tests.lint.conftest import crd_wrapping
from tests.lint.test_kuberay_crd import lint


@pytest.fixture
def served(crd_file, serve):
    """/v170.yaml: the targeted release's schema; /custom.yaml: the same with one field more (a fork's CRD)."""
    schema = json.loads(crd_file.read_text())["versions"]["v1"]
    forked = json.loads(json.dumps(schema))
    forked["properties"]["spec"]["properties"]["forkOnlyField"] = {"type": "string"}
    return serve({"/v170.yaml": crd_wrapping(schema), "/custom.yaml": crd_wrapping(forked)})[0]


def test_the_targeted_release_is_recognized_by_its_digest(capsys, cache, served):
    code, out, _ = lint(capsys, "crd", "fetch", "--url", f"{served}/v170.yaml")
    assert code == 0 and f"KubeRay {kuberay_crd.KUBERAY_VERSION} RayCluster CRD (recognized" in out, out
    assert out.startswith(f"downloaded: {kuberay_crd.cache_path()}")


def test_any_other_schema_is_cached_as_custom_and_said_so(capsys, cache, served):
    code, out, err = lint(capsys, "crd", "fetch", "--url", f"{served}/custom.yaml")
    assert code == 0, err
    stored = kuberay_crd.release_cache_path(kuberay_crd.CUSTOM)
    assert out.strip() == f"downloaded: {stored}" and stored.is_file()
    assert "custom: its schema (sha256 " in err and f"--kuberay-crd {stored}" in err, err
    assert not kuberay_crd.cache_path().exists()  # never stored as the targeted release
    code, out, _ = lint(capsys, "crd", "path")
    assert str(stored) not in out  # not the default; used only when named
    # After a custom download, the targeted release's URL still downloads and becomes the default.
    code, out, _ = lint(capsys, "crd", "fetch", "--url", f"{served}/v170.yaml")
    assert code == 0 and out.startswith(f"downloaded: {kuberay_crd.cache_path()}"), out


def test_another_known_release_is_named_and_kept_apart(capsys, cache, tmp_path):
    """A reduced schema whose digest is another pinned release's (v1.5.0 here by construction of the table)."""
    reduced = {"kind": "RayCluster", "group": "ray.io", "versions": {"v1": {"type": "object"}}}
    digest = kuberay_crd.schema_digest(reduced)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(kuberay_crd.KNOWN_SCHEMAS, digest, "v1.5.0")
        path = tmp_path / "old.json"
        path.write_text(json.dumps(reduced))
        code, out, err = lint(capsys, "crd", "fetch", "--url", path.as_uri())
    assert code == 0, err
    stored = kuberay_crd.release_cache_path("v1.5.0")
    assert out.strip() == f"downloaded: {stored}" and "the KubeRay v1.5.0 RayCluster CRD" in err, err
    assert not kuberay_crd.cache_path().exists()
