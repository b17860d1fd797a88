"""Building blocks shared by every chart's values: strict objects, images, secrets, resources."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# DNS-1123 label: what Kubernetes accepts for Service, Secret and PVC names.
Dns1123 = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
# A Kubernetes quantity such as "8", "500m", "32Gi".
Quantity = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")]
# A path inside the shared filesystem, relative to global.storage.mountPath (never absolute, never "..").
# Segments may not start with "." so "..", "." and hidden paths are impossible (RE2: no look-around).
# At most PATH_MAX_CHARS: with every list at its limit the job ConfigMap stays under Kubernetes' 1 MiB
# (tests/values/test_path_limits.py); Linux's own PATH_MAX is 4096.
PATH_MAX_CHARS = 1024
RelPath = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$",
                                           max_length=PATH_MAX_CHARS)]
AbsPath = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]*$", max_length=PATH_MAX_CHARS)]


class Strict(BaseModel):
    """Unknown keys are errors: a typo must fail at install, not become a dead knob."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SecretRef(Strict):
    """A reference to a key in a Kubernetes Secret. There is deliberately no field for the value."""

    name: Dns1123 = Field(description="Secret name in the release namespace.")
    key: EnvName = Field(description="Key inside the Secret.")


class Image(Strict):
    """A container image, pinned by exact tag or digest (grpo-lint GRPO701 rejects floating tags)."""

    repository: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._/:-]*$")] = Field(
        description="Registry and repository, e.g. `vllm/vllm-openai`."
    )
    tag: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")] = Field(
        description="Exact tag, e.g. `v0.20.2`. Used when `digest` is empty."
    )
    digest: Annotated[str, StringConstraints(pattern=r"^(sha256:[a-f0-9]{64})?$")] = Field(
        description="`sha256:...`; when set it wins over the tag."
    )


class Resources(Strict):
    """Requests (and equal limits) for a CPU container."""

    cpu: Quantity = Field(description="CPU request and limit.")
    memory: Quantity = Field(description="Memory request and limit.")


class ProbeBudget(Strict):
    """A startupProbe's budget: initialDelaySeconds + failureThreshold x periodSeconds."""

    # Bounds: a day of start-up is beyond any model load; Kubernetes itself takes int32 here.
    initialDelaySeconds: int = Field(ge=0, le=86_400, description="Seconds before the first probe (at most a day).")
    periodSeconds: int = Field(ge=1, le=3_600, description="Seconds between probes (at most an hour).")
    failureThreshold: int = Field(ge=1, le=10_000, description="Failed probes before the container is restarted.")
