"""The lint pipeline for one run (one values file, optionally over base files; or one manifest file):

read (positions) -> merge over chart defaults (Helm) -> schema -> render (helm_python) -> object schemas
-> build the job -> rules -> located, suppressed findings.

A stage that finds the input unusable stops with input errors (exit 2); otherwise findings are returned.
"""

from __future__ import annotations

import os
import re
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import MAX_MESSAGE, InputError, clip
from ..filereader import read_text
from ..job import BuildError
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import Rendered, RenderedObject, RenderError, job_spec, merged_values, render
from ..safeyaml import load_documents, load_input
from ..values import (
    ValuesFile,
    load_values_file,
    locate,
    merge_user_values,
    schema_violations,
    shape_errors,
    violation_errors,
    with_user_nulls,
)
from .context import LintContext, attach_job
from .finding import Finding, Hit, Severity
from .steps import (
    apply_suppressions,
    is_manifest_docs,
    object_schema_hits,
    positions,
    rule_hits,
    unchecked_rayclusters,
)
from .suppress import LintConfig, inline_suppressions


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    unchecked_rayclusters: int = 0  # RayCluster objects not validated against the KubeRay CRD (none given)
    # (apiVersion, kind) -> objects of a kind with no bundled schema: shape-checked only, said once per kind
    unchecked_kinds: Counter = field(default_factory=Counter)
    # What the rules saw (values runs only): callers that check the same release elsewhere (the scheduler oracle,
    # the live preflight) read the rendered objects from here instead of rendering again. Never cached.
    context: LintContext | None = field(default=None, repr=False, compare=False)


@dataclass
class Options:
    release: str = DEFAULT_RELEASE
    namespace: str = DEFAULT_NAMESPACE
    kuberay_crd: str | None = None
    config: LintConfig = field(default_factory=LintConfig)
    select: frozenset[str] | None = None  # only these codes


def looks_like_manifests(path: str) -> bool:
    """A file whose first YAML document has apiVersion and kind is a manifest stream, not values."""
    try:
        docs = load_input(read_text(path), path, is_manifest_docs)
    except InputError:
        return False
    return is_manifest_docs(docs)


def lint_file(path: str, base: list[str] | tuple[str, ...] = (), release: str = DEFAULT_RELEASE,
              namespace: str = DEFAULT_NAMESPACE, **kw: Any) -> LintResult:
    """One file as the CLI gives it: a manifest stream is linted as objects, anything else as values (over
    `base`). The file is read once, with the bounds of `safeyaml`."""
    try:
        text = read_text(path)
        docs = load_input(text, path, is_manifest_docs)
    except InputError as exc:
        return LintResult(input_errors=[exc])
    if is_manifest_docs(docs):
        return lint_manifests(path, text=text, docs=docs, **kw)
    return lint_values([*base, path], release=release, namespace=namespace, **kw)


def lint_values(paths: list[str], release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE,
                **kw: Any) -> LintResult:
    """Lint values files merged in order (helm -f a -f b); positions come from the last file setting a key."""
    opts = Options(release=release, namespace=namespace, **kw)
    checked = _check(paths, opts)
    if isinstance(checked, LintResult):
        return checked
    try:
        rendered = render(checked.user, release=release, namespace=namespace, helm_schema=False)
    except RenderError as exc:
        return LintResult(input_errors=render_input_errors(checked.files, exc))
    return _finish(checked, rendered)


def lint_values_many(items: list[list[str]], release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE,
                     ahead: int | None = None, **kw: Any) -> Iterator[LintResult]:
    """`lint_values` for each list of values files, results in order. Helm renders (native code that releases
    the GIL) run in `ahead` threads (default: one per core) while this thread checks and lints the files
    before and after them; the renders are the same calls on the same values, so results are the same."""
    ahead = _cores() if ahead is None else ahead
    if len(items) < 2 or ahead < 1:
        yield from (lint_values(paths, release=release, namespace=namespace, **kw) for paths in items)
        return
    opts = Options(release=release, namespace=namespace, **kw)
    queue: deque = deque()
    with ThreadPoolExecutor(ahead, thread_name_prefix="grpo-lint-render") as pool:
        for paths in items:
            checked = _check(paths, opts)
            rendering = None
            if not isinstance(checked, LintResult):
                rendering = pool.submit(render, checked.user, release=release, namespace=namespace, helm_schema=False)
            queue.append((checked, rendering))
            if len(queue) > ahead:
                yield _rendered(*queue.popleft())
        while queue:
            yield _rendered(*queue.popleft())


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _rendered(checked: _Checked | LintResult, rendering: Future | None) -> LintResult:
    if isinstance(checked, LintResult):
        return checked
    try:
        rendered = rendering.result()
    except RenderError as exc:
        return LintResult(input_errors=render_input_errors(checked.files, exc))
    return _finish(checked, rendered)


@dataclass
class _Checked:
    """Values that passed every check before the render."""

    files: list[ValuesFile]
    user: dict[str, Any]
    merged: dict[str, Any]
    opts: Options


def _check(paths: list[str], opts: Options) -> _Checked | LintResult:
    """Read, merge and schema-check the values: a LintResult with input errors where that fails."""
    try:
        files = [load_values_file(p) for p in paths]
    except InputError as exc:
        return LintResult(input_errors=[exc])
    user = merge_user_values(files)
    shape = shape_errors(files, user)
    if shape:
        return LintResult(input_errors=shape)
    try:
        merged = merged_values(user)
    except Exception as exc:  # noqa: BLE001 - helm_python raises its own error types on values it cannot coalesce
        return LintResult(input_errors=[InputError(paths[-1], f"cannot merge values: {exc}")])
    violations = schema_violations(with_user_nulls(merged, user))
    if violations:
        return LintResult(input_errors=violation_errors(files, violations))
    return _Checked(files, user, merged, opts)


def _finish(checked: _Checked, rendered: Rendered) -> LintResult:
    """Object schemas, the job build and the rules over the rendered release; located, suppressed findings."""
    files, opts = checked.files, checked.opts
    locator = Locator(files)
    ctx = LintContext(files[-1].path, opts.release, opts.namespace, list(rendered.objects), values_file=files[-1],
                      merged=checked.merged, rendered=rendered, extra=dict(opts.config.settings), user=checked.user)
    try:
        attach_job(ctx, job_spec(rendered))
    except RenderError:
        pass
    unchecked_kinds: Counter = Counter()
    hits = [h[:4] for h in object_schema_hits(ctx.objects, opts, unchecked_kinds)] + rule_hits(ctx, opts)
    findings = [locator.finding(code, name, sev, hit, ctx) for code, name, sev, hit in hits]
    findings += _evaluation_findings(checked, ctx, locator, findings)
    # Values the builder refuses fail the lint, as they fail grpo-render --job: a rule explains most of them
    # (GRPO102 ...); one that no error finding covers is unusable input, exit 2 at the key the builder names.
    explained = any(f.severity is Severity.ERROR for f in findings)
    errors = [build_input_error(files, ctx.build_error)] if ctx.build_error and not explained else []
    return LintResult(findings=_suppress(findings, files, opts), input_errors=errors,
                      unchecked_rayclusters=unchecked_rayclusters(ctx.objects, opts), unchecked_kinds=unchecked_kinds,
                      context=ctx)


def _evaluation_findings(checked: _Checked, ctx: LintContext, locator: Locator, seen: list[Finding]) -> list[Finding]:
    """The evaluation release a run's file configures, linted too (lint/evaluation_view.py)."""
    from dataclasses import replace

    from . import evaluation_view as view

    if not view.configures_evaluation(checked.files, checked.merged):
        return []
    eval_ctx = view.evaluation_context(checked.files, ctx)
    if eval_ctx is None:
        return []
    known = {(f.code, f.line, f.message) for f in seen}
    out = []
    for code, name, sev, hit in rule_hits(eval_ctx, checked.opts):
        if view.about_evaluation(hit, eval_ctx):
            f = locator.finding(code, name, sev, hit, eval_ctx)
            if (f.code, f.line, f.message) not in known:
                out.append(replace(f, message=clip(view.PREFIX + f.message, MAX_MESSAGE)))
    return out


# Helm's own schema check names a key as a JSON pointer: "- at '/lm-eval/tasks': got null, want array".
HELM_SCHEMA_LINE = re.compile(r"^- at '(/[^']*)': (.+)$", re.MULTILINE)


def render_input_errors(files: list[ValuesFile], exc: RenderError) -> list[InputError]:
    """Helm's refusal as input errors located at the keys its schema messages name (a subchart Helm validates
    that grpo-lint's own schema pass does not, e.g. a disabled one), else one error on the last file."""
    text = str(exc)
    out = []
    for pointer, why in HELM_SCHEMA_LINE.findall(text):
        key = ".".join(part for part in pointer.strip("/").split("/") if part)
        file, line, col = locate(files, key, defaults=False)
        out.append(InputError(file, f"{why} (Helm's schema)", line, col, key_path=key or None))
    return out or [InputError(files[-1].path, f"helm render failed: {text}")]


def build_input_error(files: list[ValuesFile], exc: BuildError) -> InputError:
    """A BuildError ("global.job.x: why") as an input error located at that key in the values files."""
    head, sep, rest = str(exc).partition(": ")
    if sep and head.startswith("global.") and " " not in head:
        file, line, col = locate(files, head, defaults=False)
        return InputError(file, rest, line, col, key_path=head)
    return InputError(files[-1].path, f"cannot build the job command: {exc}")


def lint_manifests(path: str, namespace: str | None = None, text: str | None = None, docs: list[Any] | None = None,
                   **kw: Any) -> LintResult:
    """Lint one plain manifest stream: a release of one file (lint/release.py). Objects of the wrong shape get
    object-schema findings and are kept from the rules, which read objects by their Kubernetes shape."""
    from .release import ManifestFile, lint_release

    try:
        text = read_text(path) if text is None else text
        docs = load_documents(text, path, helm=False) if docs is None else docs
    except InputError as exc:
        return LintResult(input_errors=[exc])
    return lint_release([ManifestFile(path, text, docs)], namespace=namespace, **kw)


class Locator:
    """Maps a values key path or an object path to (file, line, column)."""

    def __init__(self, files: list[ValuesFile], manifest_docs: dict[str, list] | None = None):
        self.files = files
        self.manifest_docs = manifest_docs or {}
        self._rendered_docs: dict[str, list] = {}

    def locate(self, key_path: str, ctx: LintContext) -> tuple[str, int, int]:
        if not self.files:  # a manifest-mode hit that names no object: the top of the manifest file
            return ctx.file, 1, 1
        return locate(self.files, key_path)

    def locate_object(self, obj: RenderedObject, path: str, ctx: LintContext) -> tuple[str, int, int]:
        docs = self.manifest_docs.get(obj.template)
        shown = obj.template
        if docs is None and ctx.rendered is not None:
            if obj.template not in self._rendered_docs:
                self._rendered_docs[obj.template] = positions(ctx.rendered.manifests.get(obj.template, ""))
            docs = self._rendered_docs[obj.template]
            # grpo-stack/charts/vllm/templates/x.yaml -> charts/grpo-stack/charts/vllm/templates/x.yaml
            shown = f"charts/{obj.template}"
        from ..positions import PosMap, PosSeq

        line, col = 1, 1
        node = docs[obj.index] if docs and obj.index < len(docs) else None
        for part in [p for p in path.split(".") if p]:
            if isinstance(node, PosMap) and part in node:
                line, col = (x + 1 for x in node.lc.key(part))
                node = node[part]
            elif isinstance(node, PosSeq) and part.isdigit() and int(part) < len(node):
                line, col = (x + 1 for x in node.lc.item(int(part)))
                node = node[int(part)]
            else:
                break
        return shown, line, col

    def finding(self, code: str, name: str, severity: Severity, hit: Hit, ctx: LintContext) -> Finding:
        from .rules import finding

        if hit.obj is not None:
            file, line, col = self.locate_object(hit.obj, hit.key_path, ctx)
        else:
            file, line, col = self.locate(hit.key_path, ctx)
        return replace(finding(code, severity, hit, file, line, col), name=name)


def _suppress(findings: list[Finding], files: list[ValuesFile], opts: Options) -> list[Finding]:
    sup = [s for f in files for s in inline_suppressions(f.path, f.text)]
    return apply_suppressions(findings, sup, opts.config.disable, {f.path: f for f in files})


def values_context(paths: list[str], release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE
                   ) -> tuple[LintContext, list[ValuesFile]]:
    """The context the rules see for these values, for checks outside the rule engine (the live preflight
    reads the cluster against it). Raises the first InputError the lint would report as exit 2."""
    checked = _check(paths, Options(release=release, namespace=namespace))
    if isinstance(checked, LintResult):
        raise checked.input_errors[0]
    try:
        rendered = render(checked.user, release=release, namespace=namespace, helm_schema=False)
    except RenderError as exc:
        raise render_input_errors(checked.files, exc)[0] from None
    ctx = LintContext(checked.files[-1].path, release, namespace, list(rendered.objects),
                      values_file=checked.files[-1], merged=checked.merged, rendered=rendered)
    try:
        ctx.job_spec = job_spec(rendered)
    except RenderError:
        pass
    return ctx, checked.files
