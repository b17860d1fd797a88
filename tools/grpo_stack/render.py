"""Render the chart with Helm's own engine (helm_python, Helm v4 SDK in-process)."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from .paths import SUBCHART_NAMES, chart_dir, subchart_dir
from .release import DEFAULT_NAMESPACE, DEFAULT_RELEASE

NOTES = "NOTES.txt"
# libyaml's safe loader when PyYAML was built with it (the PyPI wheels are): rendered manifests are large.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RenderError(Exception):
    """Helm refused the values or a template failed; the message is Helm's, sorted for stability."""


@dataclass(frozen=True)
class RenderedObject:
    template: str  # e.g. grpo-stack/charts/vllm/templates/deployment.yaml
    index: int  # document index inside the template output
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return self.obj.get("kind", "")

    @property
    def name(self) -> str:
        return (self.obj.get("metadata") or {}).get("name", "")

    @property
    def is_test_hook(self) -> bool:
        return "test" in str(((self.obj.get("metadata") or {}).get("annotations") or {}).get("helm.sh/hook", ""))


@dataclass(frozen=True)
class Rendered:
    manifests: dict[str, str]  # template path -> text, NOTES.txt excluded
    notes: str
    objects: tuple[RenderedObject, ...]

    def of_kind(self, kind: str) -> list[RenderedObject]:
        return [o for o in self.objects if o.kind == kind]


class QuietStderr:
    """The Go SDK logs symlink notices (the library chart link) straight to fd 2; keep CLI output clean. fd 2 is
    one per process and renders run in threads (lint/engine.lint_values_many): the first to enter points it at
    /dev/null, the last to leave restores it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: int | None = None

    @contextlib.contextmanager
    def __call__(self):
        with self._lock:
            if self._depth == 0:
                self._saved = os.dup(2)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
                os.close(null)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._saved is not None:
                    os.dup2(self._saved, 2)
                    os.close(self._saved)
                    self._saved = None


_quiet_stderr = QuietStderr()


def load_engine_in_background() -> None:
    """Start loading Helm's engine (a large native library whose runtime starts its own threads) while this
    thread imports the linter; a failure here is left to the first render, which reports it."""

    def load() -> None:
        with contextlib.suppress(Exception):
            import helm_python  # noqa: F401

    threading.Thread(target=load, name="grpo-lint-helm-load", daemon=True).start()


@contextlib.contextmanager
def chart(helm_schema: bool = True):
    """A freshly loaded chart (10-20 ms). Helm's coalescing writes globals into the loaded chart's subchart values,
    so reusing one loaded chart across renders leaks one values file's globals into the next render.
    `helm_schema=False` loads a copy without the values.schema.json files and without the subcharts' own
    archives of a library chart the umbrella carries (see `render`, `_lint_copy_ignores`)."""
    import helm_python

    helm_python.disable_logging()
    with _quiet_stderr():
        loaded = helm_python.Chart.load(str(chart_dir() if helm_schema else _schemaless_copy(str(chart_dir()))))
    try:
        yield loaded
    finally:
        loaded.close()


_copy_lock = threading.Lock()


def _schemaless_copy(path: str) -> str:
    """This process's copy of the chart at `path` without its values.schema.json files, removed at exit."""
    with _copy_lock:
        return _make_schemaless_copy(path)


@cache
def _make_schemaless_copy(path: str) -> str:
    import atexit
    import shutil
    import tempfile

    root = tempfile.mkdtemp(prefix="grpo-chart-")
    atexit.register(shutil.rmtree, root, True)
    target = os.path.join(root, os.path.basename(path.rstrip("/")) or "chart")
    shutil.copytree(path, target, ignore=_lint_copy_ignores(path))
    return target


def _lint_copy_ignores(path: str):
    """What the schema-less copy leaves out: every values.schema.json, and each subchart's vendored archive of a
    library chart the umbrella also carries in its own charts/ (grpo-common). Helm loads and parses every copy of
    the library on each render (a third of a render's CPU) and all of them define the same templates, which
    tests/chart/test_chart_dependencies.py holds byte-identical; tests/render/test_helm_schema_agreement.py holds
    the copy's render to Helm's normal one on every shipped file."""
    top = os.path.join(path, "charts")
    archives = _library_archives(top)

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n == "values.schema.json"}
        nested_charts = os.path.basename(directory) == "charts" and os.path.dirname(os.path.dirname(directory)) == top
        if nested_charts:
            skipped |= archives & set(names)
        return skipped

    return ignore


def _library_archives(charts: str) -> set[str]:
    """`<name>-<version>.tgz`, the archive `helm dependency build` makes, of each library chart (`type: library`)
    in the umbrella's charts/: the only archives a subchart carries that the umbrella's own copy stands in for."""
    out = set()
    for name in os.listdir(charts) if os.path.isdir(charts) else ():
        meta = os.path.join(charts, name, "Chart.yaml")
        if os.path.isfile(meta):
            with open(meta, encoding="utf-8") as f:
                chart = yaml.load(f, Loader=FAST_LOADER) or {}
            if isinstance(chart, dict) and chart.get("type") == "library":
                out.add(f"{chart.get('name', name)}-{chart.get('version')}.tgz")
    return out


@cache
def _merging_chart(path: str):
    """One loaded chart for every merge_values of the process (loading costs more than merging). Unlike a
    render, Helm's CoalesceValues copies the chart's values before coalescing: the loaded chart is left as it
    was (tests/render/test_merge.py)."""
    import helm_python

    helm_python.disable_logging()
    with _quiet_stderr():
        return helm_python.Chart.load(path)


@cache
def subchart_defaults(name: str) -> dict[str, Any]:
    return yaml.load((subchart_dir() / name / "values.yaml").read_text(), Loader=FAST_LOADER) or {}


def coalesce(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalesce: defaults fill what values lack, maps merge deeply, a null in values deletes the key."""
    out = {k: v for k, v in values.items() if v is not None}
    for k, d in defaults.items():
        if k in values and values[k] is None:
            continue
        if k not in out:
            out[k] = d
        elif isinstance(out[k], dict) and isinstance(d, dict):
            out[k] = coalesce(out[k], d)
    return out


def merged_values(user: dict[str, Any]) -> dict[str, Any]:
    """User values coalesced over every chart default, as an install composes them: the umbrella's defaults
    (helm_python's merge_values), then each subchart's own defaults under its section, with the parent's
    `global` copied in (Helm gives every subchart the parent's globals).

    helm_python's merge_values coalesces only the umbrella's own values.yaml, so subchart defaults are coalesced
    here with Helm's rules (`coalesce`)."""
    with _quiet_stderr():
        top = _merging_chart(str(chart_dir())).merge_values(user)
    for name in SUBCHART_NAMES:
        section = dict(top.get(name) or {})
        section.pop("global", None)
        merged = coalesce(section, subchart_defaults(name))
        merged["global"] = top.get("global", {})
        top[name] = merged
    return top


def render(user: dict[str, Any], release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE,
           helm_schema: bool = True) -> Rendered:
    """`helm_schema=False` renders without Helm's values-schema check, for callers that have just run the same
    check themselves (grpo-lint: values.schema_violations). Helm compiles every chart's schema on each render, which
    is most of a render's time; the templates' output is the same (tests/render/test_helm_schema_agreement.py)."""
    import helm_python

    try:
        with chart(helm_schema) as loaded:
            out = loaded.render(user, name=release, namespace=namespace, is_install=True)
    except helm_python.HelmError as exc:
        lines = str(exc).splitlines()
        raise RenderError("\n".join(lines[:1] + sorted(lines[1:]))) from None
    notes = ""
    manifests: dict[str, str] = {}
    objects: list[RenderedObject] = []
    for template in sorted(out):
        text = out[template]
        if template.endswith(NOTES):
            notes = text
            continue
        if not text.strip():
            continue
        manifests[template] = text
        try:
            docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d]
        except yaml.YAMLError as exc:  # a value the templates did not quote safely; name the template
            raise RenderError(f"{template}: the chart rendered invalid YAML: {str(exc).splitlines()[0]}") from None
        objects += [RenderedObject(template, i, doc) for i, doc in enumerate(docs)]
    return Rendered(manifests, notes, tuple(objects))


def job_spec(rendered: Rendered) -> dict[str, Any]:
    """The job.json the chart put in the job ConfigMap: the builder's only input."""
    import json

    for o in rendered.of_kind("ConfigMap"):
        data = o.obj.get("data") or {}
        if "job.json" in data:
            return json.loads(data["job.json"])
    raise RenderError("the chart rendered no job ConfigMap (job.json)")
