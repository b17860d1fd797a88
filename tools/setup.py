"""Build hook: the wheel carries the charts (see build_charts.py), so an installed grpo-lint / grpo-render works
from any directory. Metadata is in pyproject.toml."""

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_charts import commands  # noqa: E402

setup(cmdclass=commands(Path(__file__).resolve().parent))
