"""The tools as a user installs them: a wheel built from tools/ (and `pip install .` at the repository root, what
pre-commit does for a `language: python` hook), installed into a fresh venv, run from `/`.

Prevents the reviewed failure: `pip install ./tools`, then grpo-lint from another directory died with a
FileNotFoundError for the chart and exit 1 (the "findings" code). The charts ship inside the package, copied
from charts/ at build time (tools/build_charts.py); the drift test below compares the copy file by file."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, VALUES_FILES

PIP = [sys.executable, "-m", "pip"]


def build_wheel(source: Path, out: Path) -> Path:
    """pip wheel, offline: setuptools comes from the test environment (--no-build-isolation)."""
    subprocess.run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out),
                    str(source)], check=True, cwd="/", timeout=600)
    (wheel,) = out.glob("grpo_stack-*.whl")
    return wheel


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new venv with only the wheel installed; its dependencies are seen through a .pth listing this test
    environment's site-packages (no network). The checkout's own package is never on that path."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    subprocess.run([*PIP, "--python", str(where / "bin" / "python"), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300)
    purelib = subprocess.run([str(where / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path("
                              "'purelib'))"], capture_output=True, text=True, check=True).stdout.strip()
    deps = [p for p in (*site.getsitepackages(), *sys.path) if p.endswith("site-packages") and Path(p).is_dir()
            and not (Path(p) / "grpo_stack").exists()]
    (Path(purelib) / "grpo_stack_test_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    return where / "bin"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(REPO_ROOT / "tools", tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def venv_bin(wheel, tmp_path_factory) -> Path:
    return fresh_venv(tmp_path_factory.mktemp("venv") / "v", wheel)


def run(bin_dir: Path, tool: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPO_") and k != "PYTHONPATH"}
    env["XDG_CACHE_HOME"] = "/nonexistent-grpo-cache"  # no KubeRay CRD cache: the shipped schema is the one used
    return subprocess.run([str(bin_dir / tool), *args], capture_output=True, text=True, cwd="/", env=env,
                          timeout=300, check=False)


def chart_files(root: Path) -> dict[str, bytes]:
    """Every file under root, symlinks followed (the packaged copy has none)."""
    out = {}
    for folder, _, names in os.walk(root, followlinks=True):
        for name in names:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def test_wheel_charts_equal_the_checkout(wheel):
    """Drift test: the charts inside the wheel are exactly charts/ (every file, same bytes, nothing else)."""
    prefix = "grpo_stack/_charts/"
    with zipfile.ZipFile(wheel) as zf:
        packaged = {n[len(prefix):]: zf.read(n) for n in zf.namelist() if n.startswith(prefix) and not n.endswith("/")}
    expected = chart_files(REPO_ROOT / "charts")
    assert sorted(packaged) == sorted(expected)
    assert [k for k in expected if packaged[k] != expected[k]] == []


def test_installed_package_is_the_wheel(venv_bin):
    out = subprocess.run([str(venv_bin / "python"), "-c", "import grpo_stack.paths as p; print(p.chart_dir())"],
                         capture_output=True, text=True, cwd="/", check=True).stdout.strip()
    assert str(venv_bin.parent) in out and out.endswith("grpo_stack/_charts/grpo-stack"), out


@pytest.mark.parametrize("values", VALUES_FILES, ids=lambda p: p.stem)
def test_lint_and_render_from_root(venv_bin, values):
    """From `/`, the installed tools lint clean against the KubeRay CRD the wheel ships (no download, no cache),
    render what the checkout renders, and build the job."""
    lint = run(venv_bin, "grpo-lint", str(values))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "not checked against the KubeRay CRD" not in lint.stderr, lint.stderr
    rendered = run(venv_bin, "grpo-render", str(values), "--namespace", "team-a")
    assert rendered.returncode == 0, rendered.stderr
    checkout = subprocess.run([str(Path(sys.executable).with_name("grpo-render")), str(values), "--namespace",
                               "team-a"], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert rendered.stdout == checkout.stdout
    job = run(venv_bin, "grpo-render", str(values), "--job", "--format", "json")
    assert job.returncode == 0, job.stderr
    assert json.loads(job.stdout)


def test_installed_lint_checks_rayclusters_against_the_shipped_crd(venv_bin, tmp_path):
    """After `pip install`, with no cache and no flag, a RayCluster field KubeRay v1.7.0 does not know is a
    finding, and `grpo-lint crd path` names the schema inside the installed package."""
    manifest = tmp_path / "rc.yaml"
    manifest.write_text("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\n"
                        "spec:\n  headGroupSpec:\n    rayStartParams: {}\n    noSuchField: 1\n"
                        "    template: {spec: {containers: [{name: ray-head, image: 'r:1'}]}}\n")
    proc = run(venv_bin, "grpo-lint", "--select", "GRPO002", str(manifest))
    assert proc.returncode == 1 and "noSuchField" in proc.stdout, proc.stdout + proc.stderr
    path = run(venv_bin, "grpo-lint", "crd", "path")
    assert path.returncode == 0 and path.stdout.strip().startswith(str(venv_bin.parent)), path.stdout
    assert path.stdout.strip().endswith("grpo_stack/crds/ray.io_rayclusters.v1.7.0.json"), path.stdout


def test_installed_exit_codes(venv_bin, tmp_path):
    """Input errors are 2 and name the file; a --chart that is not a chart is a usage error, not a crash."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("global: [1, 2]\n")
    for tool in ("grpo-lint", "grpo-render"):
        proc = run(venv_bin, tool, str(bad))
        assert proc.returncode == 2 and str(bad) in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        proc = run(venv_bin, tool, "--chart", str(tmp_path), str(VALUES_FILES[0]))
        assert proc.returncode == 2 and "not a chart directory" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert run(venv_bin, "grpo-lint", "rules").returncode == 0
    assert run(venv_bin, "grpo-lint", "explain", "GRPO401").returncode == 0


def test_chart_flag_uses_that_chart(venv_bin):
    """--chart renders from the given directory (here the checkout's charts/grpo-stack)."""
    proc = run(venv_bin, "grpo-render", "--chart", str(REPO_ROOT / "charts" / "grpo-stack"), str(VALUES_FILES[0]))
    assert proc.returncode == 0, proc.stderr


def test_repository_root_installs_the_same_package(wheel, tmp_path):
    """pre-commit's `language: python` runs `pip install .` at the repository root: that builds the same package
    (metadata read from tools/pyproject.toml) with the charts and the grpo-lint entry point the hook calls."""
    import yaml

    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    assert all(h["language"] == "python" for h in hooks)
    root_wheel = build_wheel(REPO_ROOT, tmp_path)
    with zipfile.ZipFile(root_wheel) as root_zip, zipfile.ZipFile(wheel) as tools_zip:
        assert sorted(n for n in root_zip.namelist() if ".dist-info/" not in n) == sorted(
            n for n in tools_zip.namelist() if ".dist-info/" not in n)
        entry_points = root_zip.read(next(n for n in root_zip.namelist() if n.endswith("entry_points.txt"))).decode()
    for hook in hooks:
        assert f"{hook['entry'].split()[0]} = " in entry_points
    bin_dir = fresh_venv(tmp_path / "hook-venv", root_wheel)
    hook = hooks[0]
    proc = run(bin_dir, hook["entry"].split()[0], *hook["entry"].split()[1:], str(VALUES_FILES[0]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
