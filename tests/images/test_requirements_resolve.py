"""Each image's Python requirements resolve for the image's own Python and platform, so a pin that does not
exist, has no wheel for that Python, or conflicts fails here and not in a Docker build.

`pip install --dry-run --ignore-installed --report` with the image's --python-version / --platform /
--only-binary=:all:, resolving the requirements file together with the pins the Dockerfile installs itself
(`pip install name==version` in a RUN line) and the base image's own framework pin (vllm/vllm-openai:vX brings
vllm==X, whose dependencies verl's must agree with). An image that installs with --no-deps must pin the whole
closure: every resolved package is pinned in its requirements file.

Needs PyPI (CI has it): marked `network`; GRPO_OFFLINE=1 skips it on a machine without network.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

IMAGES = REPO_ROOT / "images"
# Python and platform of each base image (x86_64: the p5en/p6 GPU nodes and the m6i CPU nodes).
# python:3.11.15-slim is Debian 13 (glibc 2.41); vllm/vllm-openai:v0.20.2 is Ubuntu 22.04 (glibc 2.35) with
# Python 3.12 (vLLM's Dockerfile ARG PYTHON_VERSION=3.12).
BASES = {
    r"python:(\d+\.\d+)\.\d+-slim.*": ("{0}", 41),
    r"vllm/vllm-openai:v[\d.]+": ("3.12", 35),
}
FRAMEWORK_PINS = {r"vllm/vllm-openai:v([\d.]+)": "vllm=={0}"}
PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[\w,-]+\])?==[\w.+!-]+$")

pytestmark = [pytest.mark.network,
              pytest.mark.skipif(os.environ.get("GRPO_OFFLINE") == "1", reason="GRPO_OFFLINE=1: no PyPI here")]


@dataclass(frozen=True)
class Image:
    name: str
    base: str
    python: str
    glibc: int
    requirements: Path
    extra_pins: tuple[str, ...]
    no_deps: bool


def image(dockerfile: Path) -> Image:
    text = dockerfile.read_text()
    base = re.search(r"^FROM\s+(?:--platform=\S+\s+)?(\S+)", text, re.MULTILINE).group(1).split("@")[0]
    found = [(m, target) for pattern, target in BASES.items() if (m := re.fullmatch(pattern, base))]
    assert found, f"{dockerfile}: base {base} has no Python/platform entry in BASES; add it"
    m, (python, glibc) = found[0]
    pins = []
    run_lines = re.sub(r"\\\n", " ", text)
    for line in re.findall(r"pip3? install[^\n&;]*", run_lines):
        pins += [w for w in line.split() if PIN.match(w)]
    for pattern, pin in FRAMEWORK_PINS.items():
        fm = re.fullmatch(pattern, base)
        if fm:
            pins.append(pin.format(*fm.groups()))
    return Image(dockerfile.parent.name, base, python.format(*m.groups()), glibc,
                 dockerfile.parent / "requirements.txt", tuple(pins), "--no-deps" in text)


def images_with_requirements() -> list[Image]:
    return [image(d) for d in sorted(IMAGES.glob("*/Dockerfile")) if (d.parent / "requirements.txt").is_file()]


def resolve(img: Image, tmp: Path) -> list[dict]:
    platforms = [f"manylinux_2_{v}_x86_64" for v in range(img.glibc, 4, -1)] + [
        "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    report = tmp / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--target", str(tmp / "target"), "--report", str(report), "--python-version", img.python,
           "--implementation", "cp", *[a for p in platforms for a in ("--platform", p)], "--only-binary=:all:",
           "-r", str(img.requirements), *img.extra_pins]
    req = img.requirements.relative_to(REPO_ROOT)
    print(f"\n{img.name}: pip install --dry-run ... --python-version {img.python} --platform manylinux_2_{img.glibc}"
          f"_x86_64 (and older) --only-binary=:all: -r {req} {' '.join(img.extra_pins)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, check=False)
    errors = "\n".join(ln for ln in proc.stderr.splitlines() if "is ignored: it is neither" not in ln)
    assert proc.returncode == 0, f"{img.name} ({img.base}, Python {img.python}): requirements do not resolve\n{errors}"
    return json.loads(report.read_text())["install"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_image_is_covered():
    """Every image with Python requirements has a known base (a new base must be added to BASES)."""
    names = [i.name for i in images_with_requirements()]
    assert names, "no image requirements found"


@pytest.mark.parametrize("img", images_with_requirements(), ids=lambda i: i.name)
def test_requirements_resolve(img, tmp_path):
    installed = resolve(img, tmp_path)
    resolved = {canonical(i["metadata"]["name"]): i["metadata"]["version"] for i in installed}
    print(f"{img.name}: {len(resolved)} packages resolve for Python {img.python} / glibc 2.{img.glibc} x86_64")
    pinned = {}
    for line in img.requirements.read_text().splitlines():
        line = line.split("#")[0].strip()
        if PIN.match(line):
            name, version = line.split("==")
            pinned[canonical(name.split("[")[0])] = version
    for name, version in pinned.items():
        assert resolved.get(name) == version, f"{img.name}: {name}=={version} resolved as {resolved.get(name)}"
    if img.no_deps:
        unpinned = sorted(set(resolved) - set(pinned))
        assert not unpinned, f"{img.name} installs with --no-deps but does not pin {unpinned}"
