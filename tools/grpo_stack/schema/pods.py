"""Scheduling and identity of the chart's pods: extra node selector terms, node affinity, tolerations, pod
labels and annotations, priority class, service account, image registry and pull secrets."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from .common import Strict

LABEL_KEY_PATTERN = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                     r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LabelKey = Annotated[str, StringConstraints(pattern=LABEL_KEY_PATTERN, max_length=316)]
LabelValue = Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")]
# DNS-1123 subdomain (PriorityClass and ServiceAccount names), or empty for none.
Subdomain = Annotated[str, StringConstraints(
    pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$", max_length=253)]
# A registry host with an optional port and path: `123456789012.dkr.ecr.us-west-2.amazonaws.com`,
# `registry.local:5000/mirror`; empty: every image as its repository names it.
Registry = Annotated[str, StringConstraints(
    pattern=r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*)?$", max_length=255)]

# Labels the chart sets on every pod: selectors (Services, NetworkPolicies, Deployments, KubeRay) match on them,
# so a pod label may not set them (KubeRay's own `ray.io/*` labels included).
RESERVED_LABELS = re.compile(r"^(app\.kubernetes\.io/(name|instance|component|part-of|version|managed-by)|"
                             r"helm\.sh/chart|ray\.io/.*|grpo-stack\.io/ray-cluster)$")
RESERVED_REASON = ("labels: the chart sets this label itself and its selectors match on it "
                   "(app.kubernetes.io/name, instance, component, part-of, version, managed-by, helm.sh/chart, "
                   "ray.io/*); pick another key")


class Toleration(Strict):
    key: LabelKey = Field(description="Taint key, e.g. `grpo-stack/sandbox`.")
    operator: Literal["Exists", "Equal"] = Field(description="Exists (any value) or Equal (`value`).")
    value: LabelValue | None = Field(default=None, description="Taint value (operator Equal).")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(description="Taint effect.")


class NodeRequirement(Strict):
    """One node selector requirement: a node label and the values it must (not) have."""

    key: LabelKey = Field(description="Node label, e.g. `topology.kubernetes.io/zone`.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] = Field(
        description="Kubernetes' node selector operator.")
    values: list[LabelValue] = Field(default_factory=list, max_length=64,
                                     description="Values for In / NotIn, one integer for Gt / Lt, none otherwise.")


INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
INSTANCE_TYPE_REASON = ("nodeSelector: node.kubernetes.io/instance-type is the component's instanceType key (the "
                        "Ray workers': global.cluster.gpuInstanceType)")


def _selector_schema(schema: dict) -> None:
    schema["additionalProperties"] = False
    schema["propertyNames"] = {**schema.get("propertyNames", {}), "not": {"const": INSTANCE_TYPE_KEY},
                               "x-grpo-reason": INSTANCE_TYPE_REASON}


def _labels_schema(schema: dict) -> None:
    schema["additionalProperties"] = False
    schema["propertyNames"] = {**schema.get("propertyNames", {}), "not": {"pattern": RESERVED_LABELS.pattern},
                               "x-grpo-reason": RESERVED_REASON}


class PodScheduling(Strict):
    """Where a pod may run and what it carries besides what the chart sets. Merged with the chart's own: the
    instance-type selector, the GPU taint toleration, the sandbox's anti-affinity and the chart's labels win."""

    nodeSelector: dict[LabelKey, LabelValue] = Field(
        json_schema_extra=_selector_schema,
        description="Node labels the pod requires besides its instance type, e.g. "
        "`{karpenter.sh/capacity-type: on-demand}` (grpo-lint GRPO618 checks they agree with the instance type).")
    nodeAffinity: list[NodeRequirement] = Field(
        max_length=32,
        description="Required node affinity, all of them at once: one availability zone "
        "(`{key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a]}`), a placement group's or a "
        "capacity reservation's node label.")
    tolerations: list[Toleration] = Field(
        max_length=32, description="Tolerations besides the chart's own (the GPU taint on the Ray workers).")
    annotations: dict[LabelKey, Annotated[str, StringConstraints(max_length=4096)]] = Field(
        json_schema_extra={"additionalProperties": False},
        description="Pod annotations, e.g. `{karpenter.sh/do-not-disrupt: \"true\"}`; the chart's own "
        "(config hash, instrumentation opt-outs) win.")
    labels: dict[LabelKey, LabelValue] = Field(
        json_schema_extra=_labels_schema,
        description="Pod labels, e.g. cost allocation `{team: rl}`; never one the chart's selectors use.")
    priorityClassName: Subdomain = Field(description="PriorityClass of the pod; empty: the cluster's default.")

    @field_validator("nodeSelector")
    @classmethod
    def _no_instance_type(cls, selector: dict[str, str]) -> dict[str, str]:
        # Mirrored in JSON Schema by _selector_schema.
        if INSTANCE_TYPE_KEY in selector:
            raise ValueError(INSTANCE_TYPE_REASON.split(": ", 1)[1])
        return selector

    @field_validator("labels")
    @classmethod
    def _no_selector_labels(cls, labels: dict[str, str]) -> dict[str, str]:
        # Mirrored in JSON Schema by _labels_schema.
        reserved = sorted(k for k in labels if RESERVED_LABELS.match(k))
        if reserved:
            raise ValueError(f"{', '.join(reserved)}: {RESERVED_REASON.split(': ', 1)[1]}")
        return labels


class Pod(PodScheduling):
    """A component's pod: the settings of global.pod merged with these, plus its identity."""

    serviceAccountName: Subdomain = Field(
        description="ServiceAccount the pod runs as (an IRSA role annotation or an EKS Pod Identity association "
        "gives it AWS credentials); its token is mounted only then. Empty: no identity, no token. grpo-lint "
        "GRPO821 refuses it on pods that run model-written code.")


class GlobalPod(PodScheduling):
    """Settings for every pod of the release (helm test hooks included); a component's `pod` adds to them."""
