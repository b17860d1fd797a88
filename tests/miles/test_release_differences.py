"""images/README.md lists every difference between the image's miles build (dec268f7, catalog/miles_flags.json)
and the release the miles tier runs (miles-rl 0.0.2, installed in the miles venv) in the flags we emit. This test
extracts 0.0.2's flags from the installed wheel's source with the same extractor the catalogue was made with
(grpo_stack.catalog.argparse_extract, which parses and never imports), and fails on a difference the table does
not list, or a listed one that is gone. Where it stops: SGLang's --sglang-* flags are in neither catalogue."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from grpo_stack.catalog import argparse_extract as ax
from grpo_stack.job import miles_flags

from .cases import MODEL_SCRIPTS, VARIANTS, make_case
from .conftest import miles_python

pytestmark = pytest.mark.miles
README = Path(__file__).resolve().parents[2] / "images" / "README.md"
COMPARED = ("type", "nargs", "choices", "default", "action", "dest")


def wheel_catalogue() -> tuple[dict, list[str]]:
    python = miles_python()
    root = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    cat, index, absent = ax.Catalogue(), ax.ClassIndex(root, "megatron"), []
    for rel in [*ax.MEGATRON_FILES, *ax.MILES_FILES]:
        if not (root / rel).is_file():
            absent.append(rel)
            continue
        cat.add(ax.extract_file(root, rel, index)[0])
    return cat.flags, absent


def emitted(tmp_path) -> dict[str, set[str]]:
    """Every flag any case emits -> the values it is given."""
    out: dict[str, set[str]] = {}
    for name in VARIANTS:
        groups, _ = miles_flags.split_flags(make_case(name, tmp_path).argv())
        for flag, values in groups:
            out.setdefault(flag, set()).update(values)
    for script in MODEL_SCRIPTS["scripts"].values():
        for flag, values in miles_flags.split_flags(script["model_args"])[0]:
            out.setdefault(flag, set()).update(values)
    return out


def listed() -> tuple[set[str], set[str]]:
    """(flags whose choices differ, files absent) as images/README.md's table lists them."""
    text = README.read_text()
    flags = set(re.findall(r"^\| flag \| `(--[a-z0-9-]+)` choices \|", text, re.MULTILINE))
    files = set(re.findall(r"^\| flag \| (miles/\S+\.py) \|", text, re.MULTILINE))
    return flags, files


def test_every_difference_in_what_we_emit_is_listed_and_harmless(tmp_path):
    wheel, absent = wheel_catalogue()
    image = miles_flags.catalogue()["flags"]
    uses = emitted(tmp_path)
    differ: dict[str, set[str]] = {}
    for flag in uses:
        if flag.startswith("--sglang-"):
            continue
        a, b = image.get(flag), wheel.get(flag)
        assert a is not None and b is not None, f"{flag} exists in only one build"
        differ[flag] = {k for k in COMPARED if a.get(k) != b.get(k)}
    choice_flags, files = listed()
    assert {f for f, keys in differ.items() if keys} == choice_flags
    assert all(keys <= {"choices"} for keys in differ.values()), differ
    for flag in choice_flags:  # each value we give is a choice of both builds
        assert uses[flag] <= {str(c) for c in image[flag]["choices"]} & {str(c) for c in wheel[flag]["choices"]}
    assert set(absent) == files
    assert not any(f.startswith("--dashboard") or image.get(f, {}).get("source", "").startswith("miles/dashboard")
                   for f in uses)
