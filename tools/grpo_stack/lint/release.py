"""Manifest mode as a release: every manifest file of one run is linted together (one LintContext), so rules
see the whole set `kubectl apply` creates: its namespaces, the Services it defines, the controllers whose pods
selectors target. Values files are linted one by one, as before.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import RenderedObject
from ..safeyaml import load_documents, read_text
from .context import LintContext
from .engine import (
    LintResult,
    Locator,
    Options,
    _apply,
    _manifest_docs,
    _object_schema_hits,
    _positions,
    _rule_hits,
    _unchecked,
    lint_values_many,
)
from .rules.release_namespace import EXPECTED
from .suppress import inline_suppressions


@dataclass(frozen=True)
class ManifestFile:
    path: str
    text: str
    docs: list[Any]


def read_input(path: str) -> ManifestFile | None:
    """The file read once: a ManifestFile when its first document is a Kubernetes object, else None (values).
    An unreadable file raises InputError."""
    text = read_text(path)
    docs = load_documents(text, path)
    return ManifestFile(path, text, docs) if _manifest_docs(docs) else None


def lint_release(files: list[ManifestFile], namespace: str | None = None, **kw: Any) -> LintResult:
    """Lint manifest files as one release. `namespace` (grpo-lint --namespace) is where the release goes; without
    it the objects' own namespace is expected (none at all: `helm template` output applied with -n)."""
    opts = Options(**kw)
    objects = [RenderedObject(f.path, i, d) for f in files for i, d in enumerate(f.docs)]
    unchecked_kinds: Counter = Counter()
    schema_hits = _object_schema_hits(objects, opts, unchecked_kinds)
    malformed = {id(h[3].obj) for h in schema_hits if h[4]}
    wellformed = [o for o in objects if id(o) not in malformed]
    ns = namespace or _common_namespace(wellformed) or "default"
    ctx = LintContext(files[0].path if files else "", "", ns, wellformed,
                      extra={**opts.config.settings, EXPECTED: namespace})
    locator = Locator([], manifest_docs={f.path: _positions(f.text) for f in files})
    hits = [h[:4] for h in schema_hits] + _rule_hits(ctx, opts)
    findings = [locator.finding(code, name, sev, hit, ctx) for code, name, sev, hit in hits]
    sup = [s for f in files for s in inline_suppressions(f.path, f.text)]
    return LintResult(findings=_apply(findings, sup, opts.config.disable, {}),
                      unchecked_rayclusters=_unchecked(objects, opts), unchecked_kinds=unchecked_kinds)


def _common_namespace(objects: list[RenderedObject]) -> str | None:
    """The namespace most objects set (rules compare in-cluster URLs with it)."""
    found = Counter(o.obj["metadata"]["namespace"] for o in objects
                    if isinstance(o.obj.get("metadata"), dict) and isinstance(o.obj["metadata"].get("namespace"), str)
                    and o.obj["metadata"]["namespace"])
    return found.most_common(1)[0][0] if found else None


def lint_paths(paths: list[str], base: list[str] | tuple[str, ...] = (), release: str = DEFAULT_RELEASE,
               namespace: str | None = None, **kw: Any) -> LintResult:
    """What `grpo-lint PATH...` checks: each values file over `base`, and all manifest files as one release."""
    out = LintResult()
    for _kind, _unit, result in lint_units(paths, base, release, namespace, **kw):
        merge(out, result)
    return out


def lint_units(paths: list[str], base: list[str] | tuple[str, ...] = (), release: str = DEFAULT_RELEASE,
               namespace: str | None = None, overlay: list[str] | tuple[str, ...] = (),
               **kw: Any) -> list[tuple[str, tuple[str, ...], LintResult]]:
    """(kind, paths of the unit, its result) in output order: one unit per values (or unreadable) file, in the
    order given, then one unit holding every manifest file (the release). The cache stores results by unit.
    `overlay` files are merged over each values file (grpo-lint --model-config); they are linted together
    (engine.lint_values_many: Helm renders one file while the others are checked)."""
    units: list[tuple[str, tuple[str, ...], LintResult | None]] = []
    manifests: list[ManifestFile] = []
    pending: list[tuple[int, list[str]]] = []  # (index in units, values files merged in order)
    for path in paths:
        try:
            found = read_input(path)
        except InputError as exc:
            units.append(("unreadable", (path,), LintResult(input_errors=[exc])))
            continue
        if found is not None:
            manifests.append(found)
        else:
            pending.append((len(units), [*base, path, *overlay]))
            units.append(("values", (path,), None))
    results = lint_values_many([files for _, files in pending], release=release,
                               namespace=namespace or DEFAULT_NAMESPACE, **kw)
    for (index, _), result in zip(pending, results, strict=True):
        units[index] = (*units[index][:2], result)
    if manifests:
        release_result = lint_release(manifests, namespace=namespace, **kw)
        units.append(("manifests", tuple(f.path for f in manifests), release_result))
    return units  # type: ignore[return-value] - every None was replaced above


def merge(into: LintResult, result: LintResult) -> None:
    into.findings += result.findings
    into.input_errors += result.input_errors
    into.unchecked_rayclusters += result.unchecked_rayclusters
    into.unchecked_kinds += result.unchecked_kinds
