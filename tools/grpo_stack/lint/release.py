"""Manifest mode as a release: every manifest file of one run is linted together (one LintContext), so rules
see the whole set `kubectl apply` creates: its namespaces, the Services it defines, the controllers whose pods
selectors target. Values files are linted one by one, as before (lint/engine.py), and this module is the one
that tells the two apart (read_input, looks_like_manifests).
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..apivalidation.objects import sops_encrypted
from ..errors import InputError
from ..filereader import read_text
from ..kustomize import KUSTOMIZATION_FILES, kustomize_namespaces
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import RenderedObject
from ..safeyaml import Span, load_documents, load_input
from .context import LintContext
from .engine import lint_values_many
from .locator import Locator
from .outcome import LintResult, Options
from .rules.release_namespace import EXPECTED, KUSTOMIZED
from .steps import (
    apply_suppressions,
    is_manifest_docs,
    object_schema_hits,
    positions,
    rule_hits,
    unchecked_rayclusters,
)
from .suppress import inline_suppressions


@dataclass(frozen=True)
class ManifestFile:
    path: str
    text: str
    docs: list[Any]
    spans: list[Span] | None = None  # where each document lies in `text`, when the reader noted it
    errors: tuple[InputError, ...] = ()  # what kubectl refuses but still reads: a duplicate key (the later value)


def read_input(path: str) -> ManifestFile | None:
    """The file read once: a ManifestFile when its first document is a Kubernetes object, else None (values).
    An unreadable file raises InputError."""
    text = read_text(path)
    spans: list[Span] = []
    duplicates: list[InputError] = []
    docs = load_input(text, path, is_manifest_docs, spans, duplicates)
    if _kustomization(path, docs):
        raise InputError(path, "a kustomize file, neither manifests nor values: render it first "
                         "(`kubectl kustomize DIR > rendered.yaml`) and lint the rendered manifests", line=1)
    return ManifestFile(path, text, docs, spans, tuple(duplicates)) if is_manifest_docs(docs) else None


def _kustomization(path: str, docs: list[Any]) -> bool:
    first = docs[0] if docs and isinstance(docs[0], dict) else {}
    return os.path.basename(path) in KUSTOMIZATION_FILES or (
        first.get("kind") in ("Kustomization", "Component")
        and str(first.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"))


def looks_like_manifests(path: str) -> bool:
    """A file whose first YAML document has apiVersion and kind is a manifest stream, not values."""
    try:
        docs = load_input(read_text(path), path, is_manifest_docs)
    except InputError:
        return False
    return is_manifest_docs(docs)


def lint_manifests(path: str, namespace: str | None = None, text: str | None = None, docs: list[Any] | None = None,
                   **kw: Any) -> LintResult:
    """Lint one plain manifest stream: a release of one file. Objects of the wrong shape get object-schema
    findings and are kept from the rules, which read objects by their Kubernetes shape."""
    duplicates: list[InputError] = []
    try:
        text = read_text(path) if text is None else text
        docs = load_documents(text, path, helm=False, duplicates=duplicates) if docs is None else docs
    except InputError as exc:
        return LintResult(input_errors=[exc])
    return lint_release([ManifestFile(path, text, docs, errors=tuple(duplicates))], namespace=namespace, **kw)


def lint_release(files: list[ManifestFile], namespace: str | None = None, **kw: Any) -> LintResult:
    """Lint manifest files as one release. `namespace` (grpo-lint --namespace) is where the release goes; without
    it the objects' own namespace is expected (none at all: `helm template` output applied with -n)."""
    opts = Options(**kw)
    objects, positions = _unwrapped(files)
    unchecked_kinds: Counter = Counter()
    schema_hits = object_schema_hits(objects, opts, unchecked_kinds)
    malformed = {id(h[3].obj) for h in schema_hits if h[4]}
    wellformed = [o for o in objects if id(o) not in malformed]
    ns = namespace or _common_namespace(wellformed) or "default"
    ctx = LintContext(files[0].path if files else "", "", ns, wellformed,
                      extra={**opts.config.settings, EXPECTED: namespace,
                             KUSTOMIZED: kustomize_namespaces([f.path for f in files])})
    locator = Locator([], manifest_docs=positions)
    hits = [h[:4] for h in schema_hits] + rule_hits(ctx, opts)
    findings = [locator.finding(code, name, sev, hit, ctx) for code, name, sev, hit in hits]
    sup = [s for f in files for s in inline_suppressions(f.path, f.text)]
    return LintResult(findings=apply_suppressions(findings, sup, opts.config.disable, {}),
                      input_errors=[e for f in files for e in f.errors],
                      unchecked_rayclusters=unchecked_rayclusters(objects, opts), unchecked_kinds=unchecked_kinds)


def _unwrapped(files: list[ManifestFile]) -> tuple[list[RenderedObject], LazyPositions]:
    """The objects of the files, each `kind: List` (what `kubectl get -o yaml` prints for several objects)
    replaced by its items, and their position documents (an item is located inside its List)."""
    objects = [RenderedObject(f.path, i, _as_applied(d)) for f in files for i, d in enumerate(_flat(f.docs, f.docs))]
    return objects, LazyPositions(files)


def _as_applied(doc: Any) -> Any:
    """A SOPS-encrypted manifest without its `sops` metadata, which decryption removes before the apply."""
    return {k: v for k, v in doc.items() if k != "sops"} if sops_encrypted(doc) else doc


def _flat(docs: list[Any], nodes: list[Any] | None) -> list[Any]:
    """`nodes` (documents, or the position documents aligned with them) with each List's items in its place."""
    out: list[Any] = []
    for i, doc in enumerate(docs):
        node = nodes[i] if nodes is not None and i < len(nodes) else None
        if _is_list(doc):
            items = node.get("items") if isinstance(node, dict) else None
            out += [items[j] if isinstance(items, list) and j < len(items) else None for j in range(len(doc["items"]))]
        else:
            out.append(node)
    return out


class LazyPositions:
    """Path -> position documents aligned with the objects, read (positions.py) only for a file that has a
    finding to locate: a clean file never pays for it."""

    def __init__(self, files: list[ManifestFile]):
        self._files = {f.path: f for f in files}
        self._done: dict[str, Sequence[Any] | None] = {}

    def get(self, path: str) -> Sequence[Any] | None:
        if path not in self._done:
            f = self._files.get(path)
            rt = positions(f.text, f.spans) if f is not None else None
            if f is None or rt is None:
                self._done[path] = None
            elif any(_is_list(doc) for doc in f.docs):
                self._done[path] = _flat(f.docs, rt)
            else:  # aligned as they are: each position document stays unconverted until a finding reads it
                self._done[path] = rt
        return self._done[path]


def _is_list(doc: Any) -> bool:
    """A `kind: List` (or `<Kind>List`) of objects: every item a mapping with a kind."""
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or not doc["kind"].endswith("List"):
        return False
    items = doc.get("items")
    return isinstance(items, list) and all(isinstance(i, dict) and "kind" in i for i in items)


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
    with _cycle_collector_off():
        return _units(paths, base, release, namespace, overlay, **kw)


@contextmanager
def _cycle_collector_off():
    """What a lint builds (documents, objects, indexes) is trees that reference counting frees; the cycle
    collector's full passes over a heap of thousands of documents took a quarter of the CPU of a 3,000-manifest
    lint and gave no memory back (the same peak RSS either way)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _units(paths: list[str], base: list[str] | tuple[str, ...], release: str, namespace: str | None,
           overlay: list[str] | tuple[str, ...], **kw: Any) -> list[tuple[str, tuple[str, ...], LintResult]]:
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
