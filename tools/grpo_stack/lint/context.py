"""What a rule sees: the values with positions, the merged values, the rendered objects, the built job.

Rules never print, exit or re-parse; everything they need is here, computed once per file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..apivalidation.podspecs import find_pod_specs, node_at, pod_metadata
from ..catalog.instances import InstanceType, lookup
from ..job import BuildError, BuiltJob, Spec, build
from .controllers import controller_labels

if TYPE_CHECKING:  # the in-pod job gate imports the rules with only what the training image carries (no PyYAML)
    from ..render import Rendered, RenderedObject
    from ..values import ValuesFile

USER_OVERRIDABLE_RAY_LABELS = frozenset({"ray.io/is-ray-node", "ray.io/identifier", "app.kubernetes.io/name",
                                         "app.kubernetes.io/created-by"})


# Kinds that hold a pod template no controller runs.
NOT_RUN = frozenset({"PodTemplate"})


@dataclass
class LintContext:
    file: str
    release: str
    namespace: str
    objects: list[RenderedObject]
    values_file: ValuesFile | None = None  # None when linting plain manifests
    merged: dict[str, Any] | None = None
    rendered: Rendered | None = None
    job_spec: dict[str, Any] | None = None
    built: BuiltJob | None = None
    build_error: BuildError | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] | None = None  # the user's values files merged, without the chart's defaults
    _value_strings: list[tuple[str, str]] | None = field(default=None, init=False, repr=False, compare=False)
    # What is derived from the objects (by kind, pod templates, the NetworkPolicies selecting a pod, ...), once per
    # object list: (the list it was derived from, key -> value); see `derived`.
    _derived: tuple[list, dict[Any, Any]] | None = field(default=None, init=False, repr=False, compare=False)
    # The typed job spec, once per job_spec mapping (rules read it a few hundred times per values file).
    _spec: tuple[dict, Spec] | None = field(default=None, init=False, repr=False, compare=False)

    # --- values -------------------------------------------------------------------------------------------
    @property
    def has_values(self) -> bool:
        return self.merged is not None

    def get(self, key_path: str, default: Any = None) -> Any:
        node: Any = self.merged or {}
        for part in key_path.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return default
        return node

    def value_strings(self):
        """(key path, string) for every string in the merged values, each once: the copies of `global` that
        Helm puts inside every subchart section are skipped. Several rules read them: listed once per context."""
        if self._value_strings is None:
            self._value_strings = [(path, text) for path, text in walk_strings(self.merged or {})
                                   if not _global_copy(path)]
        return iter(self._value_strings)

    def release_value(self, key_path: str, default: Any = None) -> Any:
        """A values key a job rule reads beside the job: from the merged values in grpo-lint; in the pod, from the
        job spec the chart rendered from the same values (`global.job.*` is its `job`, other keys its
        `release.values`, raycluster.jobSpec). One accessor, so a rule reads the same fact either way."""
        if self.has_values:
            return self.get(key_path, default)
        spec = self.job_spec or {}
        if key_path.startswith("global.job."):
            node = node_at(spec.get("job"), key_path.removeprefix("global.job."))
        else:
            release = spec.get("release") if isinstance(spec.get("release"), dict) else {}
            node = node_at(release.get("values"), key_path)
        return default if node is None else node

    def user_value(self, key_path: str) -> Any:
        """A key as the user's own values files set it (None where only a chart default, or nothing, does)."""
        return node_at(self.user, key_path) if self.user is not None else None

    def component_enabled(self, component: str) -> bool:
        return bool(self.get(f"global.components.{component}", False))

    @property
    def spec(self) -> Spec | None:
        if not self.job_spec:
            return None
        if self._spec is None or self._spec[0] is not self.job_spec:
            self._spec = (self.job_spec, Spec(self.job_spec))
        return self._spec[1]

    # --- rendered objects -----------------------------------------------------------------------------------
    def of_kind(self, *kinds: str) -> list[RenderedObject]:
        """The objects of these kinds, in document order. Rules ask per pod: an index by kind, built once per
        object list, keeps that linear in the objects."""
        index = self.derived("objects-by-kind", self._objects_by_kind)
        if len(kinds) == 1:
            return list(index.get(kinds[0], ()))
        wanted = {id(o) for k in kinds for o in index.get(k, ())}
        return [o for o in self.objects if id(o) in wanted] if wanted else []

    def _objects_by_kind(self) -> dict[str, list[RenderedObject]]:
        index: dict[str, list] = {}
        for o in self.objects:
            index.setdefault(o.kind, []).append(o)
        return index

    def object_strings(self, o: RenderedObject) -> list[tuple[str, str]]:
        """Every string of one object with its dotted path (walk_strings of `o.obj`), walked once per object list:
        most rules that read strings read every object's, and sharing the walk keeps that one walk per object."""
        walked = self.derived("object-strings", dict)
        key = id(o)
        if key not in walked:
            walked[key] = walk_strings(o.obj)
        return walked[key]

    def strings_under(self, o: RenderedObject, path: str) -> list[tuple[str, str]]:
        """`object_strings` of `o` at or below the dotted `path` (its spec, a pod template), with their full paths:
        read from the one walk of the object, not walked again."""
        prefix = f"{path}." if path else ""
        return [(p, t) for p, t in self.object_strings(o) if p.startswith(prefix) or p == path]

    def derived(self, key: Any, compute):
        """`compute()` once per key and object list (the list rules see may be replaced, never edited)."""
        if self._derived is None or self._derived[0] is not self.objects:
            self._derived = (self.objects, {})
        found = self._derived[1]
        if key not in found:
            found[key] = compute()
        return found[key]

    def pod_templates(self) -> list[tuple[RenderedObject, str, dict]]:
        """(object, dotted path to the pod spec, pod spec) for every pod the objects create, wherever it is
        embedded: workloads, CronJob, RayCluster groups, RayJob (cluster spec and submitter), RayService,
        JobSet, LeaderWorkerSet and any custom resource holding a pod template (found by shape). A core
        `PodTemplate` object is not one: no Kubernetes controller runs pods from it (a ProvisioningRequest names one
        only to size the capacity it asks for)."""
        return list(self.derived("pod-templates", lambda: [(o, path, spec) for o in self.objects  # read many times
                                                           if o.kind not in NOT_RUN
                                                           for path, spec in find_pod_specs(o.obj)]))

    def pod_templates_of(self, obj: RenderedObject) -> list[tuple[RenderedObject, str, dict]]:
        """`pod_templates` of one object: rules that ask per object read an index built once, not every
        object's templates each time (that was quadratic in the objects)."""
        def by_owner() -> dict[int, list]:
            index: dict[int, list] = {}
            for entry in self.pod_templates():
                index.setdefault(id(entry[0]), []).append(entry)
            return index
        return list(self.derived("pod-templates-by-owner", by_owner).get(id(obj), ()))

    def pod_labels(self, obj: RenderedObject, pod_path: str) -> dict[str, str | frozenset[str]]:
        """Labels the running pods will carry: the template's, and those their controller adds (KubeRay, JobSet,
        LeaderWorkerSet, Job, StatefulSet; see lint/controllers.py). A frozenset value: the pods differ."""
        labels = pod_metadata(obj.obj, pod_path).get("labels")
        own = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
        added = controller_labels(obj, pod_path)
        # KubeRay lets the template override all but ray.io/cluster, node-type and group (pod.go labelPod).
        kept = {k: v for k, v in own.items() if k in USER_OVERRIDABLE_RAY_LABELS and k in added}
        return {**own, **added, **kept}

    @staticmethod
    def instance(name: str | None) -> InstanceType | None:
        return lookup(name) if name else None


def attach_job(ctx: LintContext, spec_data: dict[str, Any]) -> None:
    """The job spec and the command the one builder makes of it, as every job rule reads them (grpo-lint and the
    in-pod gate alike); the builder's refusal goes to `ctx.build_error` (GRPO350 reports it)."""
    ctx.job_spec = spec_data
    try:
        built = build(spec_data)
        try:
            _ = ctx.spec.model
        except BuildError:
            # Every job rule reads the model: a preset naming none is the user's to fix, at its key, and no rule
            # sees a job whose model it cannot read.
            ctx.job_spec = None
            raise
        ctx.built = built
    except BuildError as exc:
        ctx.build_error = exc


def _global_copy(path: str) -> bool:
    parts = path.split(".")
    return "global" in parts[1:] or parts[0] == "grpo-common"


def walk_strings(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string leaf with its dotted path, depth first in document order. Rules walk every rendered object:
    one list is filled by plain recursion (the readers bound nesting to 64 levels), and a path is made only for
    a string or a collection, never for a number or a boolean."""
    if isinstance(node, str):
        return [(path, node)]
    out: list[tuple[str, str]] = []
    if isinstance(node, (dict, list)):
        _strings_into(out, node, f"{path}." if path else "")
    return out


def _strings_into(out: list[tuple[str, str]], node: Any, prefix: str) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for k, v in items:
        if isinstance(v, str):
            out.append((f"{prefix}{k}", v))
        elif isinstance(v, (dict, list)):
            path = f"{prefix}{k}"
            _strings_into(out, v, f"{path}." if path else "")  # (an empty key adds no level, as before)
