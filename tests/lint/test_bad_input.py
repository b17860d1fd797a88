"""Unusable input gives one clear line naming the file (and line where there is one) and exit 2 — never a
traceback. Covers the cases users hit and >= 1000 generated malformed documents."""

from __future__ import annotations

import string

import pytest
import yaml
from grpo_stack.cli.lint import main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CASES = {
    "empty": b"",
    "comments-only": b"# nothing here\n",
    "binary": bytes(range(256)) * 4,
    "not-utf8": "global: caf\u00e9\n".encode("latin-1"),
    "top-level-list": b"- global\n- job\n",
    "top-level-scalar": b"42\n",
    "two-documents": b"global: {}\n---\nglobal: {}\n",
    "duplicate-keys": b"global:\n  cluster:\n    nodes: 1\n    nodes: 2\n",
    "bad-indentation": b"global:\n  cluster:\n nodes: 1\n",
    "unclosed-flow": b"global: {cluster: [1, 2\n",
    "tab-indent": b"global:\n\tcluster: 1\n",
    "alias-bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        b"g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
    ),
    "deep-nesting": b"[" * 5000 + b"]" * 5000,
    "wrong-type": b"global:\n  cluster:\n    nodes: two\n",
    "non-string-key": b"global:\n  1: x\n",
    "timestamp": b"global:\n  cluster: 2026-11-30\n",
}


def check_output(code, out, err, path) -> None:
    text = out + err
    assert code == 2, text
    assert "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln and "error(s)" not in ln]
    assert lines, "an input error must say something"
    assert all(str(path) in ln for ln in lines), text


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_case(name, tmp_path, capsys):
    """e.g. a list at top level or a YAML alias bomb must not become a traceback or an OOM kill."""
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(CASES[name])
    code = main([str(path)])
    out = capsys.readouterr()
    check_output(code, out.out, out.err, path)


def test_missing_file(tmp_path, capsys):
    path = tmp_path / "absent.yaml"
    code = main([str(path)])
    out = capsys.readouterr()
    check_output(code, out.out, out.err, path)
    assert "no such file" in out.out


@pytest.mark.parametrize("name, text", [
    ("kustomization.yaml", "resources:\n  - deployment.yaml\npatches:\n  - path: gpu.yaml\n"),
    ("overlay.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [base]\n"),
])
def test_a_kustomize_file_is_named_as_one(name, text, tmp_path, capsys):
    """A kustomization is neither values (it would be refused key by key as unknown values) nor manifests
    (`kubectl apply -f` has no Kustomization kind): one line says to render it first."""
    path = tmp_path / name
    path.write_text(text)
    code = main([str(path)])
    out = capsys.readouterr()
    check_output(code, out.out, out.err, path)
    assert "kubectl kustomize" in out.out and "unknown key" not in out.out


def test_directory_without_values(tmp_path, capsys):
    code = main([str(tmp_path)])
    out = capsys.readouterr()
    assert code == 2 and str(tmp_path) in out.err and "Traceback" not in out.err


def test_line_is_reported_for_yaml_errors(tmp_path, capsys):
    path = tmp_path / "dup.yaml"
    path.write_bytes(CASES["duplicate-keys"])
    main([str(path)])
    assert f"{path}:4:" in capsys.readouterr().out


KEYS = st.sampled_from(["global", "job", "cluster", "nodes", "raycluster", "vllm", "image", "tag", "x", "1"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(string.printable, max_size=12))
TREES = st.recursive(SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                     st.dictionaries(KEYS, kids, max_size=4)), max_leaves=20)
DOCS = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
    TREES.map(lambda t: yaml.safe_dump(t).encode()),
    st.dictionaries(KEYS, TREES, max_size=3).map(lambda t: yaml.safe_dump({"global": t}).encode()),
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=DOCS)
def test_generated_malformed_documents(doc, tmp_path_factory, capsys):
    """>= 1000 generated malformed values documents: each is exit 2 with lines naming the file."""
    path = tmp_path_factory.mktemp("gen") / "values.yaml"
    path.write_bytes(doc)
    code = main([str(path)])
    out = capsys.readouterr()
    check_output(code, out.out, out.err, path)


MANIFEST_WITH_DUPLICATE = b"""apiVersion: apps/v1
kind: Deployment
metadata: {name: echo}
spec:
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
        - name: echo
          image: registry.example.org/echo:latest
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
            failureThreshold: 3
            periodSeconds: 10
            failureThreshold: 5
"""


def test_a_manifest_with_a_duplicate_key_is_refused_and_still_linted(tmp_path, capsys):
    """kubectl refuses a manifest with a duplicate key, so it is an input error (exit 2, file and line); the rest
    of the file is still read, with the later value, so one run shows what else a fix would leave (here the
    moving tag). A values file with a duplicate key stays refused whole (test_bad_input_case)."""
    path = tmp_path / "deploy.yaml"
    path.write_bytes(MANIFEST_WITH_DUPLICATE)
    code = main(["--no-cache", str(path)])
    out = capsys.readouterr().out
    assert code == 2
    assert f"{path}:16:" in out and "duplicate key 'failureThreshold' (first at line 14)" in out
    assert "GRPO701" in out and "echo:latest" in out
