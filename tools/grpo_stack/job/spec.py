"""Reading the job spec: the JSON the chart renders into the job ConfigMap (values + in-release endpoints)."""

from __future__ import annotations

import posixpath
from typing import Any

from ..catalog.images import FrameworkImage, image_for
from ..catalog.models import MODELS, ModelShape
from ..deadline import Deadline, DeadlineError, from_job
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
                              head_dim=int(shape["headDim"]) if shape.get("headDim") else None,
                              experts_per_token=int(shape.get("expertsPerToken") or 0))
        preset = self.get("model.preset")
        if preset is None:
            raise BuildError("global.job.model.preset: null, and no global.job.model.shape: name a preset "
                             "(grpo-lint --model-config CONFIG_JSON fills the shape of any other model)")
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


def job_deadline(spec: Spec) -> Deadline | None:
    """global.job.deadline, planned with the model's size for the checkpoint-write estimate; a bad end time is a
    BuildError at its key."""
    if not spec.opt("deadline"):
        return None
    needs_size = spec.opt("deadline.checkpointWriteMinutes") is None
    try:
        return from_job(spec.job, spec.model.parameters if needs_size else None)
    except DeadlineError as exc:
        raise BuildError(str(exc)) from exc
