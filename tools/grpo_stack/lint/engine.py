"""The lint pipeline for one run of values (one values file, optionally over base files; manifests are
lint/release.py's):

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
from dataclasses import dataclass, replace
from typing import Any

from ..errors import MAX_MESSAGE, InputError, clip
from ..job import BuildError
from ..release import DEFAULT_NAMESPACE, DEFAULT_RELEASE
from ..render import Rendered, RenderError, job_spec, merged_values, render
from ..values import (
    ValuesFile,
    as_values_file,
    locate,
    merge_user_values,
    release_file,
    schema_violations,
    shape_errors,
    violation_errors,
    with_user_nulls,
)
from .context import LintContext, attach_job
from .finding import Finding, Severity
from .locator import Locator
from .outcome import LintResult, Options
from .steps import (
    apply_suppressions,
    object_schema_hits,
    rule_hits,
    unchecked_rayclusters,
)
from .suppress import inline_suppressions


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
        files = [as_values_file(p) for p in paths]
    except InputError as exc:
        return LintResult(input_errors=[exc])
    checked = check_values(files)
    if isinstance(checked, list):
        return LintResult(input_errors=checked)
    user, merged = checked
    return _Checked(files, user, merged, opts)


def check_values(files: list[ValuesFile]) -> tuple[dict[str, Any], dict[str, Any]] | list[InputError]:
    """(the user's values merged, those merged over the chart's defaults) when they pass every check before a render
    (shape, Helm's coalescing, the chart's schema as Helm applies it, a user's `null` included), else the input
    errors of the first check that refused them. grpo-lint and grpo-render both read values through it."""
    try:
        user = merge_user_values(files)
    except InputError as exc:
        return [exc]
    shape = shape_errors(files, user)
    if shape:
        return shape
    try:
        merged = merged_values(user)
    except Exception as exc:  # noqa: BLE001 - helm_python raises its own error types on values it cannot coalesce
        return [InputError(release_file(files).path, f"cannot merge values: {exc}")]
    violations = schema_violations(with_user_nulls(merged, user))
    return violation_errors(files, violations) if violations else (user, merged)


def _finish(checked: _Checked, rendered: Rendered) -> LintResult:
    """Object schemas, the job build and the rules over the rendered release; located, suppressed findings."""
    files, opts = checked.files, checked.opts
    locator = Locator(files)
    named_by = release_file(files)
    ctx = LintContext(named_by.path, opts.release, opts.namespace, list(rendered.objects), values_file=named_by,
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
    return out or [InputError(release_file(files).path, f"helm render failed: {text}")]


def build_input_error(files: list[ValuesFile], exc: BuildError) -> InputError:
    """A BuildError ("global.job.x: why") as an input error located at that key in the values files."""
    head, sep, rest = str(exc).partition(": ")
    if sep and head.startswith("global.") and " " not in head:
        file, line, col = locate(files, head, defaults=False)
        return InputError(file, rest, line, col, key_path=head)
    return InputError(release_file(files).path, f"cannot build the job command: {exc}")


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
    named_by = release_file(checked.files)
    ctx = LintContext(named_by.path, release, namespace, list(rendered.objects), values_file=named_by,
                      merged=checked.merged, rendered=rendered)
    try:
        ctx.job_spec = job_spec(rendered)
    except RenderError:
        pass
    return ctx, checked.files
