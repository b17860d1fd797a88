"""One source of pins: images/verl/requirements.txt drives both the image and the start-up venv.

Prevents the drift this tier exists to catch: the tier proving a start-up with packages the image does not
carry (the image had megatron-core 0.18.0, the oracle venv 0.16.1, neither had Megatron-Bridge).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from .conftest import REPO_ROOT, SETUP_SCRIPT, startup_python

REQUIREMENTS = REPO_ROOT / "images" / "verl" / "requirements.txt"
CONSTRAINTS = REPO_ROOT / "tests" / "startup" / "constraints.txt"
IMAGES_README = REPO_ROOT / "images" / "README.md"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)(?P<extras>\[[^\]]*\])?==(?P<version>[^\s;#]+)\s*(#.*)?$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def image_pins() -> dict[str, str]:
    pins = {}
    for raw in REQUIREMENTS.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{REQUIREMENTS.name}: not an exact pin: {line!r}"
        pins[norm(match["name"])] = match["version"]
    return pins


def script_deviations() -> set[str]:
    text = SETUP_SCRIPT.read_text()
    names = {norm(re.search(r'^TIER_TORCH="([^=]+)==', text, re.M).group(1))}
    for var in ("TORCH_COMPANIONS", "NO_DEPS", "IGNORE_PYTHON"):
        names |= {norm(n) for n in re.search(rf"^{var}=\(([^)]*)\)", text, re.M).group(1).split()}
    names.add("transformer-engine")  # TE_CPU_PARTS replaces transformer-engine[pytorch]
    return names


def readme_startup_deviations() -> dict[str, str]:
    """package -> start-up venv column, from the second deviations table in images/README.md."""
    text = IMAGES_README.read_text()
    section = text.split("Deviations of the start-up venv", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("package", "---"):
            rows[norm(cells[0].split("[")[0])] = cells[2]
    return rows


def test_every_image_requirement_is_an_exact_pin():
    assert image_pins(), "no pins read"


def test_deviation_table_matches_the_setup_script():
    """Every way the start-up venv departs from the image is written down once, with its reason."""
    assert set(readme_startup_deviations()) == script_deviations()


def test_constraints_are_exact_pins_from_an_index():
    """A frozen `name @ file:///…` line names a wheel on the machine that froze it; pip fails on every other."""
    for raw in CONSTRAINTS.read_text().splitlines():
        if raw.strip() and not raw.startswith("#"):
            assert PIN.match(raw.strip()), f"{CONSTRAINTS.name}: not an exact pin: {raw!r}"


def test_constraints_do_not_contradict_the_image_pins():
    """constraints.txt freezes the transitive set; it may not move a pin the image file states."""
    pins = image_pins()
    deviations = script_deviations()
    for raw in CONSTRAINTS.read_text().splitlines():
        match = PIN.match(raw.strip())
        if match and norm(match["name"]) in pins and norm(match["name"]) not in deviations:
            assert match["version"] == pins[norm(match["name"])], raw


@pytest.mark.startup
def test_start_up_venv_has_the_image_versions():
    """What is installed in the start-up venv equals images/verl/requirements.txt, except the listed deviations,
    whose installed versions are the ones the table states."""
    python = startup_python()
    pins = image_pins()
    code = ("import json,sys\nfrom importlib.metadata import version, PackageNotFoundError\nout={}\n"
            "for n in sys.argv[1:]:\n"
            "    try: out[n]=version(n)\n"
            "    except PackageNotFoundError: out[n]=None\n"
            "print(json.dumps(out))")
    names = sorted(pins) + ["transformer-engine-cu12"]
    run = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    installed = json.loads(run.stdout)
    deviations = readme_startup_deviations()
    for name, pinned in pins.items():
        got = (installed.get(name) or "").split("+")[0]
        if name in deviations:
            assert got and got in deviations[name], f"{name}: installed {got!r}, README says {deviations[name]!r}"
        else:
            assert got == pinned, f"{name}: image pins {pinned}, start-up venv has {got or 'nothing'}"
    assert installed["transformer-engine-cu12"] == pins["transformer-engine"]
