"""The grpo-common library is a real Helm dependency of every subchart, not a symlink.

Each subchart declares `grpo-common` with `repository: file://../grpo-common` and carries what
`helm dependency build` makes of it: `charts/grpo-common-<version>.tgz` plus `Chart.lock`. So `helm dependency
list` reports `ok`, `helm package` archives real files, and a checkout without symlink support works.
After editing charts/grpo-common, refresh the archives with `make chart-deps`.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from grpo_stack.paths import CHART_DIR, SUBCHART_DIR, SUBCHART_NAMES

LIBRARY = SUBCHART_DIR / "grpo-common"
REFRESH = "run `make chart-deps` (helm dependency build on each subchart)"


def helm_ok(helm: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([str(helm), *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, f"helm {' '.join(args)} -> rc {proc.returncode}\n{proc.stderr[-2000:]}"
    return proc.stdout


def _comparable(files: dict[str, bytes]) -> dict[str, object]:
    """Helm re-serializes Chart.yaml when it packages a chart: compare it as data, every other file as bytes."""
    return {name: yaml.safe_load(data) if name == "Chart.yaml" else data for name, data in files.items()}


def library_files() -> dict[str, object]:
    return _comparable({str(p.relative_to(LIBRARY)): p.read_bytes() for p in sorted(LIBRARY.rglob("*"))
                        if p.is_file()})


def archive_files(archive: Path) -> dict[str, object]:
    """Files of a chart archive, relative to its top directory (grpo-common/)."""
    with tarfile.open(fileobj=io.BytesIO(archive.read_bytes())) as tar:
        return _comparable({m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers()
                            if m.isfile()})


def library_version() -> str:
    return yaml.safe_load((LIBRARY / "Chart.yaml").read_text())["version"]


def test_no_symlinks_in_the_charts():
    """A symlinked library breaks checkouts without symlink support and makes Helm warn on every load."""
    links = [str(p) for p in CHART_DIR.rglob("*") if p.is_symlink()]
    assert not links, links


@pytest.mark.parametrize("subchart", SUBCHART_NAMES)
def test_subchart_declares_and_vendors_the_library(subchart):
    chart = yaml.safe_load((SUBCHART_DIR / subchart / "Chart.yaml").read_text())
    deps = {d["name"]: d for d in chart.get("dependencies") or []}
    assert deps.get("grpo-common", {}).get("repository") == "file://../grpo-common", chart
    assert deps["grpo-common"]["version"] == library_version(), "Chart.yaml pins another library version"
    archive = SUBCHART_DIR / subchart / "charts" / f"grpo-common-{library_version()}.tgz"
    assert archive.is_file(), f"{archive} missing: {REFRESH}"
    assert archive_files(archive) == library_files(), f"{archive.name} differs from charts/grpo-common: {REFRESH}"
    extra = [p.name for p in (SUBCHART_DIR / subchart / "charts").iterdir() if p != archive]
    assert not extra, f"stale dependency archives {extra}: {REFRESH}"


@pytest.mark.parametrize("subchart", SUBCHART_NAMES)
def test_helm_dependency_list_reports_ok(subchart, helm_bin, helm_env):
    """What `helm dependency list` prints for a user: every dependency present, at the locked version."""
    out = helm_ok(helm_bin, helm_env, "dependency", "list", str(SUBCHART_DIR / subchart))
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert rows and all(row[-1] == "ok" for row in rows), out


def test_helm_dependency_build_reproduces_the_vendored_archives(helm_bin, helm_env, tmp_path):
    """`helm dependency build` on a copy of the charts yields the committed archives' contents (what a user who
    runs the standard workflow gets), for every subchart and with Helm 4."""
    copy = tmp_path / "charts"
    shutil.copytree(SUBCHART_DIR, copy)
    for subchart in SUBCHART_NAMES:
        vendored = copy / subchart / "charts"
        shutil.rmtree(vendored)
        (copy / subchart / "Chart.lock").unlink()
        helm_ok(helm_bin, helm_env, "dependency", "build", str(copy / subchart))
        (archive,) = vendored.glob("grpo-common-*.tgz")
        assert archive_files(archive) == library_files(), subchart


def test_packaged_umbrella_holds_every_library_copy_as_files(helm_bin, helm_env, tmp_path):
    """`helm package charts/grpo-stack`: the archive has the library under each subchart and no links."""
    helm_ok(helm_bin, helm_env, "package", str(CHART_DIR), "--destination", str(tmp_path))
    (archive,) = tmp_path.glob("grpo-stack-*.tgz")
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
    assert not [m.name for m in members if m.issym() or m.islnk()]
    names = {m.name for m in members}
    for subchart in SUBCHART_NAMES:
        assert f"grpo-stack/charts/{subchart}/charts/grpo-common/Chart.yaml" in names or \
            f"grpo-stack/charts/{subchart}/charts/grpo-common-{library_version()}.tgz" in names, subchart


@pytest.mark.parametrize("subchart", SUBCHART_NAMES)
def test_subchart_lints_with_the_real_helm(subchart, helm_bin, helm_env, shipped_values, tmp_path):
    """`helm lint --strict` on a subchart alone (given the globals): the library resolves from its archive."""
    from grpo_stack.render import merged_values

    values = tmp_path / "global.yaml"
    values.write_text(yaml.safe_dump({"global": merged_values(shipped_values["qwen3-235b"])["global"]}))
    out = helm_ok(helm_bin, helm_env, "lint", "--strict", str(SUBCHART_DIR / subchart), "-f", str(values),
                  "--kube-version", "1.33.0")
    assert "0 chart(s) failed" in out and "[WARNING]" not in out, out


def test_helm_env_points_at_private_dirs(helm_env):
    """The helm fixtures never read or write the user's Helm config (repositories, plugins, cache)."""
    assert all(helm_env[k].startswith(os.path.dirname(helm_env["HELM_CACHE_HOME"]))
               for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"))


def test_helm_dependency_build_on_the_umbrella_keeps_the_render(helm_bin, helm_env, tmp_path, render_values):
    """A user who runs `helm dependency build charts/grpo-stack` (as for any umbrella) gets a chart that still
    renders exactly what grpo-render renders: the local subcharts are used as they are."""
    copy = tmp_path / "grpo-stack"
    shutil.copytree(CHART_DIR, copy)
    helm_ok(helm_bin, helm_env, "dependency", "build", str(copy))
    out = helm_ok(helm_bin, helm_env, "template", "grpo", str(copy), "-f",
                  str(CHART_DIR.parents[1] / "values" / "qwen3-235b.yaml"), "--namespace", "team-a",
                  "--kube-version", "1.33.0")
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(out) if d)
    assert kinds == sorted(o.kind for o in render_values("qwen3-235b").objects)
