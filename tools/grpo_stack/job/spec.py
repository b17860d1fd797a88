"""Reading the job spec: the JSON the chart renders into the job ConfigMap (values + in-release endpoints)."""

from __future__ import annotations

import posixpath
from typing import Any

from ..catalog.models import MODELS, ModelShape
from .args import BuildError


class KeyedSection(dict):
    """A job-spec mapping whose missing key is a BuildError naming its values key path (a values file that
    deletes an optional key the builder needs), never a bare KeyError."""

    path = ""

    def __missing__(self, key: str) -> Any:
        raise BuildError(f"{self.path}.{key}: missing (the builder needs it; set it in the values file)")


def _keyed(node: Any, path: str) -> Any:
    if isinstance(node, dict):
        out = KeyedSection({k: _keyed(v, f"{path}.{k}") for k, v in node.items()})
        out.path = path
        return out
    if isinstance(node, list):
        return [_keyed(v, f"{path}.{i}") for i, v in enumerate(node)]
    return node


class Spec:
    """Typed access to the job spec with key paths for error messages."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.job = _keyed(self._req(data, "job"), "global.job")
        self.cluster = _keyed(self._req(data, "cluster"), "global.cluster")
        self.storage = _keyed(self._req(data, "storage"), "global.storage")
        self.endpoints: dict[str, str] = data.get("endpoints") or {}

    @staticmethod
    def _req(node: dict, key: str) -> Any:
        if not isinstance(node, dict) or key not in node:
            raise BuildError(f"job spec: missing {key}")
        return node[key]

    def get(self, dotted: str) -> Any:
        """Value at `job.<dotted>`; a missing key is a BuildError naming global.job.<dotted>."""
        node: Any = self.job
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                raise BuildError(f"global.job.{dotted}: missing")
            node = node[part]
        return node

    def on_storage(self, rel: str) -> str:
        return posixpath.join(self.storage["mountPath"], rel)

    @property
    def world_size(self) -> int:
        return int(self.cluster["nodes"]) * int(self.cluster["gpusPerNode"])

    @property
    def model(self) -> ModelShape:
        preset = self.get("model.preset")
        if preset not in MODELS:
            raise BuildError(f"global.job.model.preset: unknown model {preset!r}")
        return MODELS[preset]

    @property
    def max_model_len(self) -> int:
        explicit = self.get("rollout").get("maxModelLen")
        return int(explicit) if explicit else int(self.get("lengths.maxPrompt")) + int(self.get("lengths.maxResponse"))

    def endpoint(self, name: str, component: str) -> str:
        if name not in self.endpoints:
            raise BuildError(
                f"global.job.reward.kind needs the {component} component: set global.components.{component}: true"
            )
        return self.endpoints[name]
