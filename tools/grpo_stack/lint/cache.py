"""A content-addressed cache of lint results, as ruff and mypy keep one: a repeated run over unchanged inputs
answers from disk without importing the linter (no YAML round trip, Helm render, schemas or rules).

An entry is keyed by the SHA-256 of everything its result depends on: the tool (every file of the installed
`grpo_stack` package, so an edited rule or catalogue misses, and the versions of the libraries it lints with), the
chart (every file under the chart directory),
the KubeRay CRD file, the config file, `--release/--namespace/--select/--ignore` (as written: the rules are
imported only on a miss, to expand them), the evaluation overlay, the base files, and the unit's own files
(path and content). A unit is one values file, or all manifest files of the run together (one release). Any
changed byte changes the key: a changed input always misses. The key holds the bytes that were linted: the reader
notes what it read (filereader.ledger), so a file replaced while grpo-lint runs never files the old verdict under
the new content; an input read twice with two contents in one run, or a base, config or CRD file that changed
between its hashing and its reading, stores nothing. Entries live in `$GRPO_LINT_CACHE_DIR`, else
`$XDG_CACHE_HOME/grpo-stack/lint` (`~/.cache` when unset); `grpo-lint --no-cache` bypasses it. A cache that
cannot be read or written is skipped, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ..filereader import ledger, read_text
from ..kustomize import kustomizations_beside
from ..paths import EVAL_OVERLAY, PACKAGE_DIR, chart_dir
from .finding import Finding, Severity
from .selection import Selection

FORMAT = 1  # bump when the entry layout changes


@dataclass
class Outcome:
    """A run's result (the same fields as engine.LintResult, without importing the engine)."""

    findings: list[Finding] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    unchecked_rayclusters: int = 0
    unchecked_kinds: Counter = field(default_factory=Counter)
    hits: int = 0  # units answered from the cache
    misses: int = 0


def cache_dir() -> Path:
    if os.environ.get("GRPO_LINT_CACHE_DIR"):
        return Path(os.environ["GRPO_LINT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "grpo-stack" / "lint"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_digest(root: Path) -> str:
    """Every file under `root` (relative path and content), byte caches excluded."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if "__pycache__" in p.parts or p.suffix == ".pyc" or not p.is_file():
            continue
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


# The libraries whose behaviour is part of a result (Helm's engine, the bundled Kubernetes schemas, the parsers),
# by their normalised distribution names.
DEPENDENCIES = ("helm_python_sdk", "kubernetes_validate", "jsonschema", "ruamel_yaml", "pydantic", "tree_sitter",
                "tree_sitter_bash", "pyyaml")


@lru_cache(maxsize=1)
def tool_digest() -> str:
    """grpo_stack's version and every file of the package, and the installed versions of the libraries it lints
    with (their `<name>-<version>.dist-info` directories on sys.path: importlib.metadata costs more than this)."""
    installed = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info") and any(name.lower().startswith(d + "-") for d in DEPENDENCIES):
                installed.append(f"{entry}/{name}")
    return _sha(f"{__version__}\0{sorted(installed)}\0{tree_digest(PACKAGE_DIR)}".encode())


def file_digest(path: str) -> str:
    """The content hash of an input file, read with the linter's own bounds (regular file, size cap)."""
    return _sha(read_text(path).encode())


class ResultCache:
    def __init__(self, root: Path, common: str, inputs: dict[str, str] | None = None):
        self.root, self.common = root, common
        self.inputs = inputs or {}  # the shared input files (base, config, CRD) -> the digest in `common`

    def key(self, *parts: Any) -> str:
        return _sha(json.dumps([FORMAT, self.common, *parts]).encode())

    def get(self, key: str) -> Any:
        try:
            return json.loads((self.root / key[:2] / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: Any) -> None:
        target = self.root / key[:2] / f"{key}.json"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as f:
                json.dump(value, f)
            os.replace(tmp, target)
        except OSError:
            pass


def run_lint(paths: list[str], base: list[str], release: str, namespace: str | None, crd: str | None,
             config_path: str | None, select: Selection | None = None, use_cache: bool = True,
             overlay: list[str] | tuple[str, ...] = ()) -> Outcome:
    """Lint `paths` as the CLI does (lint/release.py): units whose key hits come from the cache, the others are
    linted (importing the linter only then) and stored. With an `overlay` (a generated file) nothing is cached."""
    if overlay:
        return _assemble(_compute(paths, base, release, namespace, crd, config_path, select, None, overlay), {})
    cache = _open(base, release, namespace, crd, config_path, select) if use_cache else None
    plan = _lookup(cache, paths) if cache is not None else None
    if plan is None:  # no cache, or an input or the config not seen before: lint everything
        return _assemble(_compute(paths, base, release, namespace, crd, config_path, select, cache), {})
    config_errors, order, found = plan
    missing = [p for unit in order if unit not in found for p in unit]
    computed = _compute(missing, base, release, namespace, crd, config_path, select, cache) if missing else None
    out = _assemble(([], computed[1]) if computed else None, found, order)
    out.input_errors[:0] = [_error(e) for e in config_errors]
    return out


def _assemble(computed: tuple[list, dict[tuple[str, ...], dict]] | None, found: dict, order: list | None = None
              ) -> Outcome:
    """Units in output order (values files as given, then the release), from the cache or just computed."""
    config_errors, fresh = computed if computed is not None else ([], {})
    out = Outcome(input_errors=list(config_errors))
    for unit in order if order is not None else list(fresh):
        if unit in found:
            _add(out, found[unit])
            out.hits += 1
        else:
            _add(out, fresh[unit])
            out.misses += 1
    return out


def _open(base, release, namespace, crd, config_path, select) -> ResultCache | None:
    try:
        inputs = {p: file_digest(p) for p in [*base, crd, config_path] if p}
        common = [tool_digest(), tree_digest(chart_dir()), crd and inputs[crd], config_path,
                  config_path and inputs[config_path], release, namespace,
                  (select or Selection()).key(),
                  [(b, inputs[b]) for b in base], _overlay_digest()]
        root = cache_dir()
    except (InputError, OSError, RuntimeError):  # RuntimeError: no home directory to put the cache in
        return None  # an unreadable input: the linter reports it, uncached
    return ResultCache(root, _sha(json.dumps(common).encode()), inputs)


def _overlay_digest() -> str | None:
    """The evaluation overlay every run's file is also linted with (lint/evaluation_view.py)."""
    return file_digest(str(EVAL_OVERLAY)) if EVAL_OVERLAY.is_file() else None


def _digests(paths: list[str]) -> dict[str, str] | None:
    try:
        return {p: file_digest(p) for p in paths}
    except InputError:
        return None


def _lookup(cache: ResultCache, paths: list[str]):
    """(config errors, units in output order, cached entries by unit), or None when the config was never seen
    with these options."""
    digests = _digests(paths)
    if digests is None:
        return None
    config = cache.get(cache.key("config"))
    if config is None:
        return None
    kinds = {p: cache.get(cache.key("kind", digests[p])) for p in paths}
    for p in [p for p, kind in kinds.items() if kind is None]:  # a new or edited file: it misses anyway
        kinds[p] = _kind(p)
    manifests = tuple(p for p in paths if kinds[p] == "manifests")
    order = [(p,) for p in paths if kinds[p] != "manifests"] + ([manifests] if manifests else [])
    found = {}
    for unit in order:
        entry = cache.get(_unit_key(cache, unit, digests))
        if entry is not None and _usable(entry):
            found[unit] = entry
    if not isinstance(config, list) or not all(_usable_error(e) for e in config):
        return None
    return config, order, found


def _usable(entry: Any) -> bool:
    """A stored entry of the current layout (a truncated or foreign file in the cache is a miss, not a crash)."""
    try:
        _add(Outcome(), entry)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def _usable_error(entry: Any) -> bool:
    try:
        _error(entry)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def _kind(path: str) -> str:
    from .release import read_input

    try:
        return "manifests" if read_input(path) is not None else "values"
    except InputError:
        return "unreadable"


# A top-level `kind:` line: a Kubernetes manifest. A values file never has one (the chart's schema allows no such
# top-level key), so only other files may need Helm's engine.
_MANIFEST_LINE = re.compile(rb"^kind:[ \t]*\S", re.MULTILINE)
_SNIFF_BYTES = 65536


def _may_render(path: str) -> bool:
    """Whether linting `path` may render the chart: not for a plain manifest stream, which never needs Helm's
    engine (loading it costs a large share of a manifest lint's CPU). Anything but a readable regular file (a
    FIFO would block here) is left to the linter to report."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return True
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return True
    return _MANIFEST_LINE.search(head) is None


def _unit_key(cache: ResultCache, unit: tuple[str, ...], digests: dict[str, str]) -> str:
    """A unit's files, each with the kustomization beside it: it decides the namespace kustomize gives the file's
    objects (GRPO850)."""
    beside = kustomizations_beside(list(unit))
    return cache.key("unit", [(p, digests[p], _digest_or_none(beside.get(p))) for p in unit])


def _digest_or_none(path: str | None) -> str | None:
    try:
        return path and file_digest(path)
    except InputError:
        return None


def _compute(paths, base, release, namespace, crd, config_path, select, cache: ResultCache | None, overlay=()):
    """(config errors, entry by unit) for `paths`, linted now; stored when `cache` is given."""
    from ..render import load_engine_in_background

    if any(_may_render(p) for p in [*paths, *(base or ()), *(overlay or ())]):
        load_engine_in_background()  # while the linter is imported
    from ..objectschema import crd_validator
    from .release import lint_units
    from .suppress import LintConfig, load_config

    codes = (select or Selection()).codes()  # before any file is read: a wrong entry is a usage error
    config_errors = []
    before = _digests(paths) if cache is not None else None
    with ledger() as reads:
        try:
            config = load_config(config_path) if config_path else LintConfig()
        except InputError as exc:
            config_errors.append(exc)
            config = LintConfig()
        if crd:
            crd_validator(crd)  # a file that is not the RayCluster CRD is an input error before any linting
        units = lint_units(paths, base=base, release=release, namespace=namespace, kuberay_crd=crd, config=config,
                           select=codes, overlay=overlay)
    fresh = {unit: cache_entry(result) for _kind, unit, result in units}
    if cache is not None and before is not None and _shared_inputs_held(cache, reads):
        digests = {p: d for p in paths if (d := _linted_digest(p, reads, before)) is not None}
        cache.put(cache.key("config"), [_error_entry(e) for e in config_errors])
        for kind, unit, _result in units:
            if all(p in digests for p in unit):
                for p in unit:
                    cache.put(cache.key("kind", digests[p]), kind)
                cache.put(_unit_key(cache, unit, digests), fresh[unit])
    return config_errors, fresh


def _linted_digest(path: str, reads: dict[str, set[str]], before: dict[str, str]) -> str | None:
    """The digest of the bytes the linter read at `path`; None when it read two contents there, or read nothing
    and the file is no longer what it was before the run."""
    seen = reads.get(os.path.abspath(path))
    if seen:
        return next(iter(seen)) if len(seen) == 1 else None
    now = _digests([path])
    return before[path] if now is not None and now[path] == before[path] else None


def _shared_inputs_held(cache: ResultCache, reads: dict[str, set[str]]) -> bool:
    """Whether the base, config and CRD files the linter read are the ones hashed into the cache's key."""
    for path, digest in cache.inputs.items():
        seen = reads.get(os.path.abspath(path))
        if seen is not None and seen != {digest}:
            return False
        if seen is None and _digests([path]) != {path: digest}:
            return False
    return True


def cache_entry(result) -> dict:
    return {"findings": [f.as_dict() for f in result.findings],
            "input_errors": [_error_entry(e) for e in result.input_errors],
            "unchecked_rayclusters": result.unchecked_rayclusters,
            "unchecked_kinds": [[api, kind, n] for (api, kind), n in result.unchecked_kinds.items()]}


def _add(out: Outcome, entry: dict) -> None:
    out.findings += [_finding(f) for f in entry["findings"]]
    out.input_errors += [_error(e) for e in entry["input_errors"]]
    out.unchecked_rayclusters += entry["unchecked_rayclusters"]
    out.unchecked_kinds += Counter({(api, kind): n for api, kind, n in entry["unchecked_kinds"]})


def _finding(d: dict) -> Finding:
    return Finding(d["file"], d["line"], d["column"], d["code"], d["name"], Severity(d["severity"]), d["key_path"],
                   d["message"], d["remediation"])


def _error_entry(e: InputError) -> dict:
    return {"file": e.file, "message": e.message, "line": e.line, "column": e.column, "key_path": e.key_path}


def _error(d: dict) -> InputError:
    """The stored error as it was (its message already clipped once: not clipped again)."""
    err = InputError.__new__(InputError)
    err.file, err.line, err.column, err.key_path, err.message = (d["file"], d["line"], d["column"], d["key_path"],
                                                                 d["message"])
    Exception.__init__(err, str(err))
    return err
