"""Reading the job spec: the JSON the chart renders into the job ConfigMap (values + in-release endpoints)."""

from __future__ import annotations

import posixpath
from typing import Any

from ..catalog.images import FrameworkImage, image_for
from ..catalog.models import MODELS, ModelShape
from .args import BuildError


class Spec:
    """Typed access to the job spec with key paths for error messages."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.job = self._req(data, "job")
        self.cluster = self._req(data, "cluster")
        self.storage = self._req(data, "storage")
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

    def opt(self, dotted: str, default: Any = None) -> Any:
        """Value at `job.<dotted>` for an optional knob: `default` when the key or a section above it is absent
        or null (then the framework's own default applies)."""
        node: Any = self.job
        for part in dotted.split("."):
            if not isinstance(node, dict) or node.get(part) is None:
                return default
            node = node[part]
        return node

    @property
    def image(self) -> FrameworkImage:
        """The catalogued image of this framework: where the framework version and rollout engine come from."""
        framework = self.get("framework")
        found = image_for(framework)
        if found is None:
            raise BuildError(f"global.job.framework: no image catalogued for {framework!r}")
        return found

    def on_storage(self, rel: str) -> str:
        return posixpath.join(self.storage["mountPath"], rel)

    @property
    def world_size(self) -> int:
        return int(self.cluster["nodes"]) * int(self.cluster["gpusPerNode"])

    @property
    def model(self) -> ModelShape:
        shape = self.opt("model.shape")
        if shape is not None:  # any model: the architecture from the values (or its HF config.json)
            return ModelShape("custom", "", int(shape["layers"]), int(shape["hidden"]), int(shape["heads"]),
                              int(shape["kvHeads"]), int(shape["experts"]), int(shape["maxPositions"]),
                              "values: global.job.model.shape", vocab_size=int(shape["vocab"]),
                              intermediate_size=int(shape["intermediate"]),
                              head_dim=int(shape["headDim"]) if shape.get("headDim") else None)
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
