"""yamllint on the shipped values files (config inline: line length 120, no `---` required)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFIG = "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}"


def test_values_files_pass_yamllint(repo_root):
    files = sorted(str(p) for p in (repo_root / "values").glob("*.yaml"))
    assert files
    yamllint = Path(sys.executable).with_name("yamllint")
    proc = subprocess.run([str(yamllint), "-f", "parsable", "-d", CONFIG, *files], check=False, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
