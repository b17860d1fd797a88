"""Values of the network section (`global.network`): egress flows the release's pods may open to peers outside it
(another namespace's Service, a VPC endpoint), each typed and admitted by the component's NetworkPolicy."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from .common import Dns1123, Strict
from .job import Cidr
from .pods import LabelKey, LabelValue

# Pods of the release that may open a declared flow. Not the sandbox: model-written code reaches no network.
FlowSource = Literal["ray", "reward-service", "fsx-utils", "vllm", "lm-eval"]

_PODS = ("namespace", "namespaceLabels", "podLabels")
_NON_EMPTY_LABELS = {"additionalProperties": False, "minProperties": 1}


def _peer_schema(schema: dict) -> None:
    """A network, or pods chosen by namespace and labels: never both, and never nothing (an empty peer would be
    every pod of the release namespace)."""
    schema["minProperties"] = 1
    schema["allOf"] = [
        {"if": {"required": ["cidr"]},
         "then": {"properties": {k: {"type": "null", "x-grpo-reason": f"{k}: a flow goes to a network (cidr) or to "
                                     "pods (namespace, namespaceLabels, podLabels), not both"} for k in _PODS}}},
        {"if": {"not": {"required": ["cidr"]}},
         "then": {"properties": {"exceptCidrs": {"type": "null", "x-grpo-reason": "exceptCidrs: only with cidr"}}}},
    ]


class EgressPort(Strict):
    port: int = Field(ge=1, le=65535, description="Destination port.")
    protocol: Literal["TCP", "UDP", "SCTP"] = Field(default="TCP", description="Its protocol.")


class EgressPeer(Strict):
    """Where the flow goes: pods (by `namespace`, `namespaceLabels`, `podLabels`) or a network (`cidr`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, json_schema_extra=_peer_schema)
    namespace: Dns1123 | None = Field(default=None, description="Pods in this namespace (its "
                                      "`kubernetes.io/metadata.name` label).")
    # Not `| None`: the generated anyOf would leave additionalProperties outside it, refusing every label.
    namespaceLabels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, max_length=8, json_schema_extra=_NON_EMPTY_LABELS,
        description="Pods in the namespaces with these labels.")
    podLabels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, max_length=8, json_schema_extra=_NON_EMPTY_LABELS,
        description="Only the pods with these labels (in the release namespace when no namespace is named).")
    cidr: Cidr | None = Field(default=None, description="A network outside the cluster's pods: a VPC endpoint's "
                              "subnet, a database, e.g. `10.1.0.0/16`.")
    exceptCidrs: list[Cidr] | None = Field(default=None, min_length=1, max_length=16,
                                           description="Parts of `cidr` still refused.")


class EgressFlow(Strict):
    """One connection the release's pods may open beyond the chart's own flows (docs/security.md)."""

    name: Dns1123 = Field(description="Names the flow in the NetworkPolicy and in grpo-lint's messages.")
    source: FlowSource = Field(alias="from", description="The release's pods that open it: `ray` (the trainers "
                               "and their reward workers), `reward-service`, `fsx-utils`, `vllm`, `lm-eval`.")
    to: EgressPeer
    ports: list[EgressPort] = Field(min_length=1, max_length=16, description="The destination ports; at least "
                                    "one (a flow to every port of another namespace is too wide to declare).")
    why: str = Field(min_length=10, max_length=300, description="Why the release needs it, shown beside the rule.")


class Network(Strict):
    egress: list[EgressFlow] = Field(
        default_factory=list, max_length=32,
        description="Flows to peers outside the release: a reward server, MLflow or an endpoint in another "
        "namespace or network. Each is admitted by the `from` component's NetworkPolicy, and grpo-lint's GRPO101 "
        "accepts an in-cluster URL in another namespace that a flow reaches on the URL's port.")
