"""The steps every lint mode runs over rendered objects (values releases and manifest releases alike): object
schema and rule hits, RayClusters left unchecked, position maps for line numbers, and suppressions."""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..objectschema import is_raycluster, validate_object
from ..render import RenderedObject
from .context import LintContext
from .finding import Finding, Hit, Severity
from .rules import RULES

if TYPE_CHECKING:
    from .outcome import Options

OBJECT_SCHEMA = ("GRPO002", "object-schema")


def is_manifest_docs(docs: list[Any]) -> bool:
    """Kubernetes objects, not values: the first document is one, or the stream holds several documents (a values
    file is one mapping) of which one is (a first object whose `apiVersion` is mistyped stays a manifest's)."""
    return bool(docs) and (_is_object(docs[0]) or len(docs) > 1 and any(map(_is_object, docs)))


def _is_object(doc: Any) -> bool:
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def unchecked_rayclusters(objects: list[RenderedObject], opts: Options) -> int:
    if opts.kuberay_crd or (opts.select is not None and OBJECT_SCHEMA[0] not in opts.select):
        return 0
    return sum(1 for o in objects if isinstance(o.obj, dict) and is_raycluster(o.obj))


def positions(text: str, spans: Sequence[tuple[int, int, int]] | None = None) -> Sequence[Any] | None:
    """Position documents (positions.py), for line numbers only: the values were already read by safeyaml, which
    noted where each document lies (`spans`) where it read them."""
    from ..positions import documents_at, load

    return documents_at(text, spans) if spans is not None else load(text)


def object_schema_hits(objects: list[RenderedObject], opts: Options, unchecked_kinds: Counter) -> list[tuple]:
    """Object-schema errors as hits. A kind with no bundled schema is not an error in the object: it is counted
    in `unchecked_kinds` (the CLI says once per kind that those objects were not schema-checked)."""
    if opts.select is not None and OBJECT_SCHEMA[0] not in opts.select:
        return []
    out = []
    for o in objects:
        for err in validate_object(o.obj, opts.kuberay_crd):
            if err.no_schema:
                unchecked_kinds[(o.obj["apiVersion"], o.obj["kind"])] += 1
                continue
            hit = Hit(err.path, f"{describe(o)}: {err.message}", obj=o,
                      remediation="fix the template or values that produce this field")
            out.append((*OBJECT_SCHEMA, Severity.ERROR, hit, err.structural))
    return out


def describe(o: RenderedObject) -> str:
    obj = o.obj if isinstance(o.obj, dict) else {}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kind, name = obj.get("kind"), meta.get("name")
    return f"{kind if isinstance(kind, str) else 'object'} {name if isinstance(name, str) else f'#{o.index}'}"


def rule_hits(ctx: LintContext, opts: Options) -> list[tuple[str, str, Severity, Hit]]:
    out = []
    for code, rule in RULES.items():
        if opts.select is not None and code not in opts.select:
            continue
        for hit in rule.check(ctx):
            out.append((code, rule.NAME, hit.severity or rule.SEVERITY, hit))
    return out


def apply_suppressions(findings, sup, config, files_by_path) -> list[Finding]:
    from .rules import suppression_reason

    out = []
    for f in findings:
        if any(s.file == f.file and f.code in s.codes and _covers(s, f, files_by_path) for s in sup
               if suppression_reason.accepted(f.code, s.reason)):
            continue
        if any(c.code == f.code and suppression_reason.accepted(c.code, c.reason)
               and (not c.paths or any(fnmatch.fnmatch(f.file, p) for p in c.paths)) for c in config):
            continue
        out.append(f)
    out += suppression_reason.findings_for(sup, config)
    return sorted(out)


def _covers(s, f: Finding, files_by_path) -> bool:
    """A directive covers a finding on its target line, or on any line of the key block it starts."""
    if f.line == s.target_line:
        return True
    vf = files_by_path.get(f.file)
    if vf is None:
        return False
    # Find the key that starts on the target line and check the finding's key path is under it.
    for key_path in _keys_on_line(vf.tree, s.target_line):
        if f.key_path == key_path or f.key_path.startswith(key_path + "."):
            return True
    return False


def _keys_on_line(node: Any, line: int, prefix: str = ""):
    from ..positions import PosMap, PosSeq

    if isinstance(node, PosMap):
        for k in node:
            kp = f"{prefix}.{k}" if prefix else str(k)
            if node.lc.key(k)[0] + 1 == line:
                yield kp
            yield from _keys_on_line(node[k], line, kp)
    elif isinstance(node, PosSeq):
        for i, v in enumerate(node):
            yield from _keys_on_line(v, line, f"{prefix}.{i}")
