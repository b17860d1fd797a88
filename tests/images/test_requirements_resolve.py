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


# Images whose requirements another tier resolves for real, with the reason this dry run is not repeated there.
RESOLVED_ELSEWHERE = {
    "verl": "tests/startup installs exactly images/verl/requirements.txt (CPU builds where the image has CUDA "
            "ones, each deviation listed in images/README.md and checked by tests/startup/test_pins.py); a "
            "cross-platform dry run of its CUDA vLLM stack ran past 25 minutes on 2 cores",
}


def images_with_requirements() -> list[Image]:
    return [image(d) for d in sorted(IMAGES.glob("*/Dockerfile")) if (d.parent / "requirements.txt").is_file()
            and d.parent.name not in RESOLVED_ELSEWHERE]


def resolve(img: Image, tmp: Path) -> list[dict]:
    """pip's resolution for the image's Python and platform. Two pip limits are worked around, soundly:
    - a package published only as an sdist cannot pass --only-binary=:all: (which --platform requires), though
      the Docker build would build it: it is built here into a wheel (it must come out pure Python,
      py3-none-any, or it stays unresolved) and offered with --find-links;
    - pip checks some packages' Requires-Python against the interpreter running pip instead of
      --python-version: the resolution is rerun with --ignore-requires-python and every resolved package's
      Requires-Python is then checked against the image's Python here."""
    platforms = [f"manylinux_2_{v}_x86_64" for v in range(img.glibc, 4, -1)] + [
        "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    report, wheelhouse = tmp / "report.json", tmp / "wheelhouse"
    wheelhouse.mkdir()
    req = img.requirements.relative_to(REPO_ROOT)
    print(f"\n{img.name}: pip install --dry-run ... --python-version {img.python} --platform manylinux_2_{img.glibc}"
          f"_x86_64 (and older) --only-binary=:all: -r {req} {' '.join(img.extra_pins)}")
    extra: list[str] = []
    running = ".".join(map(str, sys.version_info[:3]))
    for _ in range(8):
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--target", str(tmp / "target"), "--report", str(report), "--python-version", img.python,
               "--implementation", "cp", *[a for p in platforms for a in ("--platform", p)], "--only-binary=:all:",
               "--find-links", str(wheelhouse), *extra, "-r", str(img.requirements), *img.extra_pins]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, check=False)
        if proc.returncode == 0:
            break
        errors = "\n".join(ln for ln in proc.stderr.splitlines() if "is ignored: it is neither" not in ln)
        sdist_only = re.search(r"No matching distribution found for ([A-Za-z0-9._-]+)", errors)
        if f"requires a different Python: {running} not in" in errors and "--ignore-requires-python" not in extra:
            extra.append("--ignore-requires-python")
        elif sdist_only and not list(wheelhouse.glob(f"{canonical(sdist_only.group(1)).replace('-', '_')}-*")):
            name = sdist_only.group(1)
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-binary", name, "-q", "-w",
                            str(wheelhouse), name], capture_output=True, text=True, timeout=600, check=False)
            built = [w.name for w in wheelhouse.glob("*.whl")]
            print(f"{img.name}: {name} has no wheel on PyPI; built {built} from its sdist")
        else:
            raise AssertionError(f"{img.name} ({img.base}, Python {img.python}): requirements do not resolve\n"
                                 f"{errors[-4000:]}")
    else:
        raise AssertionError(f"{img.name}: no resolution after building sdist-only packages: {errors[-4000:]}")
    for whl in wheelhouse.glob("*.whl"):
        assert whl.name.endswith("-py3-none-any.whl") or whl.name.endswith("-py2.py3-none-any.whl"), (
            f"{img.name}: {whl.name} is not pure Python; it needs a wheel for {img.python}/x86_64")
    installed = json.loads(report.read_text())["install"]
    from packaging.specifiers import SpecifierSet

    target = f"{img.python}.0"
    wrong = [f"{i['metadata']['name']} (Requires-Python {i['metadata']['requires_python']})" for i in installed
             if i["metadata"].get("requires_python")
             and not SpecifierSet(i["metadata"]["requires_python"]).contains(target)]
    assert not wrong, f"{img.name}: not installable on Python {img.python}: {wrong}"
    return installed


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_image_is_covered():
    """Every image with Python requirements has a known base (a new base must be added to BASES)."""
    names = [i.name for i in images_with_requirements()]
    assert names, "no image requirements found"
    for name, reason in RESOLVED_ELSEWHERE.items():
        assert (IMAGES / name / "requirements.txt").is_file() and reason, name
    assert (REPO_ROOT / "tests" / "startup" / "setup_startup_venv.sh").is_file(), "the verl pins' own install"


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
