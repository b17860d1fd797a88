"""The result cache: identical output with and without it; any changed input misses."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.cli.lint import main
from grpo_stack.lint import cache
from grpo_stack.lint.cache import run_lint
from grpo_stack.lint.selection import Selection
from grpo_stack.paths import REPO_ROOT

from tests.lint.fixtures import FIXTURES

BASE = str(REPO_ROOT / "values" / "qwen3-235b.yaml")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("GRPO_LINT_CACHE_DIR", str(d))
    return d


@pytest.fixture
def inputs(tmp_path) -> list[str]:
    """Values with findings, a clean values file, two manifest files (one release) with findings, a bad file."""
    short = tmp_path / "short.yaml"
    short.write_text("global:\n  components:\n    vllm: true\nvllm:\n  maxModelLen: 12288\n")
    clean = tmp_path / "clean.yaml"
    clean.write_text("global:\n  storage:\n    mountPath: /fsx\n")
    shutil.copy(FIXTURES / "GRPO850" / "bad-mixed-namespaces.yaml", tmp_path / "m1.yaml")
    shutil.copy(FIXTURES / "GRPO851" / "bad-envsubst-template.yaml", tmp_path / "m2.yaml")
    (tmp_path / "broken.yaml").write_text("a: [\n")
    return [str(short), str(clean), str(tmp_path / "m1.yaml"),
            str(tmp_path / "m2.yaml"), str(tmp_path / "broken.yaml")]


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_findings_identical_with_and_without_cache(capsys, inputs, cache_dir, fmt):
    """A cache that changed a single finding would make grpo-lint lie about a file; cold, warm and --no-cache
    runs must print the same bytes and exit the same way."""
    argv = ["--format", fmt, "--base", BASE, *inputs]
    uncached = cli(capsys, "--no-cache", *argv)
    assert not cache_dir.exists(), "--no-cache must not write the cache"
    cold = cli(capsys, *argv)
    warm = cli(capsys, *argv)
    assert uncached[0] == 2 and "GRPO502" in uncached[1] and "GRPO850" in uncached[1] and "GRPO851" in uncached[1]
    assert cold == uncached and warm == uncached


def run(paths, **kw):
    opts = {"base": [BASE], "release": "grpo", "namespace": None, "crd": None, "config_path": None,
            "select": None, **kw}
    return run_lint(paths, **opts)


def test_warm_run_answers_every_unit_from_the_cache(inputs):
    first = run(inputs)
    second = run(inputs)
    assert (first.hits, first.misses) == (0, 4)  # 3 single files + 1 manifest release (m1 + m2)
    assert (second.hits, second.misses) == (4, 0)
    assert second.findings == first.findings


@pytest.mark.parametrize("enabled", [True, False])
def test_a_lint_leaves_the_callers_cycle_collector_as_it_was(inputs, enabled):
    """A lint pauses Python's cycle collector while it runs (release.lint_units); a caller in the same process (the
    in-pod gate, a test session) must get back its own setting, on success and when the input is refused alike."""
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        result = run(inputs, use_cache=False)
        assert result.findings and result.input_errors  # it linted, and refused broken.yaml
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_changed_file_misses(inputs, tmp_path):
    """Editing a file must never return the stale result (here: fixing the eval context clears GRPO502)."""
    run(inputs)
    Path(inputs[0]).write_text("vllm:\n  maxModelLen: 40960\n")
    again = run(inputs)
    assert again.misses >= 1 and not [f for f in again.findings if f.code == "GRPO502"]


def test_a_changed_manifest_misses_the_whole_release(inputs):
    """Manifests are one release: editing one file re-lints the set (a URL's Service may be in another file)."""
    before = sum(f.code == "GRPO851" and f.file == inputs[3] for f in run(inputs).findings)
    Path(inputs[3]).write_text(Path(inputs[3]).read_text().replace("${VERL_TAG}", "0.9.1"))
    again = run(inputs)
    assert (again.misses, again.hits) == (1, 3)  # the values files still hit
    assert sum(f.code == "GRPO851" and f.file == inputs[3] for f in again.findings) == before - 1


@pytest.mark.parametrize("change", ["base", "config", "namespace", "select", "ignore", "overlay", "tool",
                                    "chart"])
def test_every_key_part_is_part_of_the_key(inputs, tmp_path, monkeypatch, change):
    run(inputs)
    kw = {}
    if change == "base":
        base = tmp_path / "base.yaml"
        base.write_text(Path(BASE).read_text() + "\n")
        kw["base"] = [str(base)]
    elif change == "config":
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text("disable: []\n")
        kw["config_path"] = str(cfg)
    elif change == "namespace":
        kw["namespace"] = "verl"
    elif change in ("select", "ignore"):
        kw["select"] = Selection(**{change: "GRPO502"})
    elif change == "overlay":  # the evaluation overlay every run's file is also linted with, edited in place
        overlay = tmp_path / "eval.yaml"
        overlay.write_text((REPO_ROOT / "values" / "eval" / "eval.yaml").read_text())
        monkeypatch.setattr(cache, "EVAL_OVERLAY", overlay)
        run(inputs)
        overlay.write_text(overlay.read_text() + "\n")
    elif change == "tool":
        monkeypatch.setattr(cache, "tool_digest", lambda: "another version")
    else:
        chart = tmp_path / "chart"
        shutil.copytree(REPO_ROOT / "charts" / "grpo-stack", chart)
        (chart / "templates" / "NOTES.txt").write_text((chart / "templates" / "NOTES.txt").read_text() + "\n")
        monkeypatch.setattr(cache, "chart_dir", lambda: chart)
    assert run(inputs, **kw).hits == 0


def test_corrupt_entries_are_misses(inputs, cache_dir):
    first = run(inputs)
    for p in cache_dir.rglob("*.json"):
        p.write_text("{not json")
    again = run(inputs)
    assert again.hits == 0 and again.findings == first.findings


def test_selection_keys_on_the_words_and_a_hit_needs_no_rule(inputs):
    """The same --select written twice differently is one entry; a wrong word is still refused on a miss."""
    first = run(inputs, select=Selection("security,GRPO5"))
    again = run(inputs, select=Selection(" GRPO5 ,security,security"))
    assert (again.hits, again.misses) == (first.misses, 0) and again.findings == first.findings
    with pytest.raises(ValueError, match="unknown rule"):
        run(inputs, select=Selection("no-such-rule"))


def test_a_warm_hit_loads_no_linter(tmp_path):
    """What a cache hit imports, in a real grpo-lint process over the shipped run files: no rule, object schema
    (jsonschema, referencing), YAML parser (PyYAML, ruamel) or Helm engine; the hit answers from disk alone."""
    env = {**os.environ, "GRPO_LINT_CACHE_DIR": str(tmp_path / "cache")}
    files = [str(p) for p in sorted((REPO_ROOT / "values").glob("*.yaml"))]
    probe = ("import io, contextlib, sys\nfrom grpo_stack.cli.lint import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out: code = main(sys.argv[1:])\n"
             "print(code, sorted({m.split('.')[0] if not m.startswith('grpo_stack') else '.'.join(m.split('.')[:3]) "
             "for m in sys.modules}))")
    runs = [subprocess.run([sys.executable, "-c", probe, "--select", "correctness,security", *files], env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    cold, warm = (set(ast.literal_eval(r.stdout.split(" ", 1)[1])) for r in runs)
    linter = {"grpo_stack.lint.rules", "jsonschema", "referencing", "ruamel", "helm_python", "helm_python_sdk",
              "yaml"}
    assert {"grpo_stack.lint.rules", "helm_python"} <= cold, "the probe must see the linter load on a miss"
    assert not warm & linter, f"a warm hit imported {sorted(warm & linter)}"


def test_a_cold_lint_of_valid_values_loads_no_jsonschema(tmp_path):
    """The compiled schema checks (grpo_stack.schemafast) pass valid values and objects without jsonschema, a tenth
    of a cold run's start-up; a values file the schema refuses still gets jsonschema's errors, key path and line."""
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO_ROOT / "values" / "qwen3-8b.yaml").read_text() + "\nbogusTopLevelKey: 1\n")
    probe = ("import io, contextlib, sys\nfrom grpo_stack.cli.lint import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out: code = main(sys.argv[1:])\n"
             "print(code, 'jsonschema' in sys.modules, 'referencing' in sys.modules)\n"
             "print(out.getvalue(), file=sys.stderr)")
    files = [str(p) for p in sorted((REPO_ROOT / "values").glob("*.yaml"))]
    runs = [subprocess.run([sys.executable, "-c", probe, "--no-cache", *args], capture_output=True, text=True,
                           timeout=300) for args in (files, [str(bad)])]
    assert runs[0].stdout.split() == ["0", "False", "False"], runs[0].stderr[-2000:]
    assert runs[1].stdout.split() == ["2", "True", "True"], runs[1].stderr[-2000:]
    assert "bogusTopLevelKey" in runs[1].stderr and "bad.yaml:" in runs[1].stderr


def test_a_manifest_lint_never_loads_helms_engine(tmp_path):
    """Plain manifests are never rendered, so the engine is not loaded beside the linter (it was, in a background
    thread, for a sizeable share of a manifest lint's CPU); a values file in the same call still gets it."""
    manifest = tmp_path / "svc.yaml"
    manifest.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: grpo}\n"
                        "spec:\n  selector: {app: web}\n  ports: [{port: 80}]\n")
    probe = ("import io, contextlib, sys, threading\nfrom grpo_stack.cli.lint import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
             "[t.join() for t in threading.enumerate() if t.name == 'grpo-lint-helm-load']\n"
             "print('helm_python' in sys.modules)")
    loaded = [subprocess.run([sys.executable, "-c", probe, "--no-cache", *files], capture_output=True, text=True,
                             timeout=300).stdout.strip()
              for files in ([str(manifest)], [str(manifest), str(REPO_ROOT / "values" / "qwen3-8b.yaml")])]
    assert loaded == ["False", "True"]
