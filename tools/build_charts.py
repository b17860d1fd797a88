"""Build step shared by tools/setup.py and the repository-root setup.py: copy the charts into the built package.

The charts are NOT committed twice: `charts/` in the checkout is the only source. At build time they are copied
into the built package as `grpo_stack/_charts/` (symlinks followed, so the copy has none); an sdist carries that
copy so a wheel built from it has them too. Editable installs read the checkout's charts (grpo_stack.paths).
tests/packaging/test_wheel.py builds a wheel and compares its charts with charts/ file by file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

TOOLS = Path(__file__).resolve().parent
CHECKOUT_CHARTS = TOOLS.parent / "charts"
PACKAGED = Path("grpo_stack") / "_charts"


def copy_charts(dest: Path, packaged_copy: Path) -> None:
    src = CHECKOUT_CHARTS if CHECKOUT_CHARTS.is_dir() else packaged_copy  # an unpacked sdist carries a copy
    if not (src / "grpo-stack" / "Chart.yaml").is_file():
        raise SystemExit(f"grpo-stack charts not found at {src}: build from a checkout (tools/ beside charts/)")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def commands(source_root: Path) -> dict[str, type]:
    """setuptools cmdclass for a project whose grpo_stack package sits under `source_root`."""

    class BuildPy(build_py):
        def run(self) -> None:
            super().run()
            if not getattr(self, "editable_mode", False):
                copy_charts(Path(self.build_lib) / PACKAGED, source_root / PACKAGED)

    class Sdist(sdist):
        def make_release_tree(self, base_dir, files) -> None:
            super().make_release_tree(base_dir, files)
            copy_charts(Path(base_dir) / PACKAGED, source_root / PACKAGED)

    return {"build_py": BuildPy, "sdist": Sdist}
