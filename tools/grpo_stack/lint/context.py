"""What a rule sees: the values with positions, the merged values, the rendered objects, the built job.

Rules never print, exit or re-parse; everything they need is here, computed once per file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..catalog.instances import InstanceType, lookup
from ..job import BuildError, BuiltJob, Spec
from ..render import Rendered, RenderedObject
from ..values import ValuesFile

POD_KINDS = ("Deployment", "Job", "Pod", "RayCluster", "StatefulSet", "DaemonSet")


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
        Helm puts inside every subchart section are skipped."""
        for path, text in walk_strings(self.merged or {}):
            parts = path.split(".")
            if "global" in parts[1:] or parts[0] == "grpo-common":
                continue
            yield path, text

    def component_enabled(self, component: str) -> bool:
        return bool(self.get(f"global.components.{component}", False))

    @property
    def spec(self) -> Spec | None:
        return Spec(self.job_spec) if self.job_spec else None

    # --- rendered objects -----------------------------------------------------------------------------------
    def of_kind(self, *kinds: str) -> list[RenderedObject]:
        return [o for o in self.objects if o.kind in kinds]

    def pod_templates(self) -> list[tuple[RenderedObject, str, dict]]:
        """(object, dotted path to the pod spec, pod spec) for every pod the objects create."""
        out = []
        for o in self.of_kind(*POD_KINDS):
            spec = o.obj.get("spec") or {}
            if o.kind == "Pod":
                out.append((o, "spec", spec))
            elif o.kind == "Job" or o.kind in ("Deployment", "StatefulSet", "DaemonSet"):
                out.append((o, "spec.template.spec", (spec.get("template") or {}).get("spec") or {}))
            elif o.kind == "RayCluster":
                head = (spec.get("headGroupSpec") or {}).get("template") or {}
                out.append((o, "spec.headGroupSpec.template.spec", head.get("spec") or {}))
                for i, g in enumerate(spec.get("workerGroupSpecs") or []):
                    tpl = (g.get("template") or {}).get("spec") or {}
                    out.append((o, f"spec.workerGroupSpecs.{i}.template.spec", tpl))
        return out

    def pod_labels(self, obj: RenderedObject, pod_path: str) -> dict[str, str]:
        """Labels the running pod will carry, including those KubeRay adds to Ray pods."""
        meta_path = pod_path.rsplit(".spec", 1)[0] + ".metadata"
        node: Any = obj.obj
        for part in meta_path.split("."):
            node = node.get(part, {}) if isinstance(node, dict) else (node[int(part)] if part.isdigit() else {})
        labels = dict((node or {}).get("labels") or {}) if obj.kind != "Pod" else dict(
            (obj.obj.get("metadata") or {}).get("labels") or {}
        )
        if obj.kind == "RayCluster":
            labels.update(kuberay_labels(obj, pod_path))
        return labels

    @staticmethod
    def instance(name: str | None) -> InstanceType | None:
        return lookup(name) if name else None


def kuberay_labels(obj: RenderedObject, pod_path: str) -> dict[str, str]:
    """The labels KubeRay v1.7.0 always sets on Ray pods (ray-operator common/pod.go labelPod)."""
    cluster = obj.name
    if ".headGroupSpec." in pod_path:
        return {"ray.io/cluster": cluster, "ray.io/node-type": "head", "ray.io/group": "headgroup",
                "ray.io/is-ray-node": "yes"}
    index = int(pod_path.split(".")[2])
    group = obj.obj["spec"]["workerGroupSpecs"][index].get("groupName", "")
    return {"ray.io/cluster": cluster, "ray.io/node-type": "worker", "ray.io/group": group,
            "ray.io/is-ray-node": "yes"}


def walk_strings(node: Any, path: str = ""):
    """Every string leaf with its dotted path."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_strings(v, f"{path}.{i}" if path else str(i))
    elif isinstance(node, str):
        yield path, node
