"""The repository stands alone: what the product and the tests read ships inside the clone, each copied file with
its provenance (upstream repository, tag, path, sha256), and nothing under tools/, tests/, charts/, the Makefile
or .ci/ reaches for a directory beside the clone.

Prevents the reported failure: `make test` in a plain clone failed because the KubeRay CRD schemas and the
GPU-memory reference rows were read from a sibling directory that only one CI layout had."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

# Each folder of copied upstream material, with the SOURCES.json that says where every file in it came from.
COPIED = [REPO_ROOT / "tools" / "grpo_stack" / "crds", REPO_ROOT / "tests" / "reference" / "gpu-memory",
          REPO_ROOT / "tools" / "grpo_stack" / "monitoring" / "crds",
          REPO_ROOT / "tools" / "grpo_stack" / "monitoring" / "recorded"]
SCANNED = ["tools", "tests", "charts", "Makefile", ".ci", "setup.py"]
# A path out of the clone into a sibling folder: `../<name>` in a string, or `.parent / "<name>"`-style joins.
OUTSIDE = re.compile(r"""\.\./shared\b|GRPO_SHARED_DIR|(?:parent|parents\[\d+\])\s*/\s*["']shared["']""")


@pytest.mark.parametrize("folder", COPIED, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_copied_file_has_its_provenance_and_digest(folder):
    sources = json.loads((folder / "SOURCES.json").read_text())["files"]
    present = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != "SOURCES.json")
    assert present == sorted(sources), "files without a SOURCES.json entry, or entries without a file"
    for name, entry in sources.items():
        assert {"upstream", "tag", "path", "sha256"} <= set(entry), name
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == entry["sha256"], (
            f"{folder / name} differs from the upstream copy its SOURCES.json records")


def _text_files():
    for top in SCANNED:
        root = REPO_ROOT / top
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file() and path.suffix not in {".pyc", ".tgz", ".whl"} and path != Path(__file__):
                try:
                    yield path, path.read_text()
                except UnicodeDecodeError:
                    continue


def test_nothing_reads_beside_the_clone():
    found = [f"{path.relative_to(REPO_ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for path, text in _text_files() for m in OUTSIDE.finditer(text)]
    assert not found, "\n".join(found)


def test_the_pattern_sees_each_way_of_reaching_outside():
    """The scan above is only as good as its pattern: each spelling the old code used is caught."""
    for line in ('Path("../shared/schemas")', 'os.environ["GRPO_SHARED_DIR"]', 'REPO_ROOT.parent / "shared"',
                 "Path(__file__).parents[2] / 'shared'", "$(wildcard ../shared/schemas/x.json)"):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search('volumes: [{name: shared, mountPath: /shared}]')
