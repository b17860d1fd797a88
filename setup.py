"""`pip install .` at the repository root installs the same package as `pip install ./tools`: this is what
pre-commit does for a `language: python` hook (.pre-commit-hooks.yaml). The metadata is read from
tools/pyproject.toml (one source); the package and the charts come from tools/ and charts/."""

import sys
import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tools"))
from build_charts import commands  # noqa: E402

pyproject = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())
project = pyproject["project"]
setup(
    name=project["name"],
    version=project["version"],
    description=project["description"],
    python_requires=project["requires-python"],
    install_requires=project["dependencies"],
    entry_points={"console_scripts": [f"{name}={target}" for name, target in project["scripts"].items()]},
    package_dir={"": "tools"},
    packages=find_packages("tools", include=["grpo_stack", "grpo_stack.*"]),
    package_data=pyproject["tool"]["setuptools"]["package-data"],
    cmdclass=commands(ROOT / "tools"),
)
