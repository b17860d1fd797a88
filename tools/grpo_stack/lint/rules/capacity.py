"""GRPO601 node-capacity."""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog.capacity import capacity_row, quantity, stated_in_values
from ...catalog.instances import EC2_NAME, INSTANCE_TYPES, InstanceType, did_you_mean, lookup
from ...errors import InputError
from ..finding import Hit, Severity
from ._objects import containers, values_section

CODE = "GRPO601"
NAME = "node-capacity"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A pod's requests do not fit the instance types it may schedule on, or it takes a partial EFA count."
DOC = """## What it does
For every pod, reads the instance types its `nodeSelector` / required node affinity admits
(`node.kubernetes.io/instance-type`, or the deprecated `beta.kubernetes.io/instance-type`), and compares the
pod's effective requests (the larger of the sum of its containers and its largest init container) with each
type's allocatable CPU, memory, GPUs and EFA interfaces (Karpenter's AL2023 estimate, sourced per row in
`grpo_stack/catalog/instances.py`). A pod that requests EFA must request the node's full count.

An instance type the catalogue lacks is an error in a values file, with the closest catalogued names ("did you
mean"): `p5.48xl`, `p5en.48xlarg`. A real type the catalogue does not list is accepted once its capacity is
stated, in the values (`global.instanceTypes`) or in `.grpo-lint.yaml` (`instance-types`), and then checked like
any other. Both state the same four figures; where both name a type, the values file's entry wins for that release
(it describes the cluster the release is installed on). A catalogued type stated there is an error: its capacity
is sourced already. In plain manifests an unknown size of a family the catalogue lists (`p5.24xlarge`) is a
warning; a family it does not list (`g4dn.xlarge`) says nothing about the manifest and is not reported until its
capacity is stated, and other clouds' machine names (GKE `a2-highgpu-8g`, AKS `Standard_ND96asr_v4`) are not
findings: they are not EC2 types at all.

Allocatable figures as the node reports them (`kubectl describe node`), in the values:
`global: {instanceTypes: {c7i.2xlarge: {cpu: 7910m, memory: 29317Mi, gpus: 0, efa: 0}}}`, or for every file the
lint checks, in `.grpo-lint.yaml`: `instance-types: {c7i.2xlarge: {cpu: 7910m, memory: 29317Mi, gpus: 0, efa: 0}}`.
A GPU type may add `gpuMemory`, one GPU's memory as `nvidia-smi --query-gpu=memory.total` reports it (`97871Mi`
for an H20): the memory model (GRPO920) and GRPO905 then judge the type by it instead of passing over it.

## Why is this bad?
The predecessor's validation Job admitted `m5.xlarge` (4 vCPU, ~14 GiB allocatable) while requesting 8 CPU and
16 GiB: that branch of the selector could never schedule and the Job sat Pending. A partial EFA request leaves
interfaces unused and NCCL silently slower or on the wrong transport; an all-reduce smoke test does not notice.

## Example
```yaml
global:
  cluster:
    gpuInstanceType: p5en.48xlarge
    efaPerNode: 8
```
Use instead:
```yaml
global:
  cluster:
    gpuInstanceType: p5en.48xlarge
    efaPerNode: 16
```

## Fix
Lower the requests below the allocatable figures in the message, pick a larger instance type, or request the
instance's full EFA count.
"""

CONFIG_KEY = "instance-types"  # the `.grpo-lint.yaml` section: capacity of types the catalogue lacks
VALUES_KEY = "global.instanceTypes"  # the same, stated in the values for one release (the chart ignores it)
CAPACITY_KEYS = {"cpu", "memory", "gpus", "efa"}
OPTIONAL_KEYS = {"gpuMemory"}  # one GPU's memory: read by the memory model (GRPO920) and GRPO905


def read_config(section: object, file: str) -> dict[str, InstanceType]:
    """`instance-types: {NAME: {cpu: 7910m, memory: 29317Mi, gpus: 0, efa: 0}}`: allocatable cpu and memory
    (Kubernetes quantities), GPUs and EFA interfaces per node; all four are required."""
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise InputError(file, "expected a mapping of instance type name to {cpu, memory, gpus, efa}",
                         key_path=CONFIG_KEY)
    out = {}
    for name, cap in section.items():
        where = f"{CONFIG_KEY}.{name}"
        if not isinstance(cap, dict) or not CAPACITY_KEYS <= set(cap) <= CAPACITY_KEYS | OPTIONAL_KEYS:
            raise InputError(file, "expected {cpu, memory, gpus, efa} and optionally gpuMemory: the node's "
                             "allocatable cpu and memory, its GPUs and EFA interfaces, one GPU's memory",
                             key_path=where)
        if lookup(str(name)):
            raise InputError(file, f"{name} is catalogued already (its capacity is sourced); remove it here",
                             key_path=where)
        cpu, mem = quantity(cap["cpu"]), quantity(cap["memory"])
        if "gpuMemory" in cap and quantity(cap["gpuMemory"]) <= 0:
            raise InputError(file, "gpuMemory must be a positive quantity (97871Mi)", key_path=f"{where}.gpuMemory")
        counts = [cap[k] for k in ("gpus", "efa")]
        if cpu <= 0 or mem <= 0 or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
            raise InputError(file, "cpu and memory must be positive quantities (7910m, 29317Mi), gpus and efa "
                             "whole numbers", key_path=where)
        out[str(name)] = capacity_row(str(name), cap, f".grpo-lint.yaml {where}")
    return out


def stated_types(ctx) -> dict[str, InstanceType]:
    """Capacity stated for types the catalogue lacks: `.grpo-lint.yaml`'s, then the values' (the schema has
    checked their shape), which win for this release. Catalogued names stay the catalogue's (check() flags them)."""
    out = dict(ctx.extra.get(CONFIG_KEY) or {})
    stated = ctx.get(VALUES_KEY) if ctx.has_values else None
    for name in stated if isinstance(stated, dict) else ():
        row = stated_in_values(ctx.get("global"), str(name))
        if row is not None:
            out[str(name)] = row
    return out


def node_type(ctx, name: str) -> InstanceType | None:
    """The catalogue's row, else the capacity the values or `.grpo-lint.yaml` state for it."""
    return lookup(name) or stated_types(ctx).get(name)


def unknown_type_message(name: str) -> str:
    return (f"instance type {name!r} is not in the instance catalogue{did_you_mean(name)}; a real type it lacks "
            f"needs its capacity stated, in the values ({VALUES_KEY}: {{{name}: {{cpu, memory, gpus, efa}}}}) "
            f"or in .grpo-lint.yaml ({CONFIG_KEY})")


def _requests(pod: dict) -> dict[str, float]:
    total: dict[str, float] = {}
    init_max: dict[str, float] = {}
    for field, _, c in containers(pod):
        res = c.get("resources") or {}
        req = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        for k, v in req.items():
            q = quantity(v)
            if field == "initContainers":
                init_max[k] = max(init_max.get(k, 0), q)
            else:
                total[k] = total.get(k, 0) + q
    return {k: max(total.get(k, 0), init_max.get(k, 0)) for k in set(total) | set(init_max)}


# The well-known label, and the deprecated one older manifests still select on (kubelets set both).
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _selected_type(pod: dict) -> str | None:
    selector = pod.get("nodeSelector") if isinstance(pod.get("nodeSelector"), dict) else {}
    return next((str(selector[k]) for k in INSTANCE_TYPE_LABELS if selector.get(k)), None)


def _instance_types(pod: dict) -> list[str]:
    selected = _selected_type(pod)
    if selected:
        return [selected]
    terms = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    out = []
    for term in terms:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") in INSTANCE_TYPE_LABELS and expr.get("operator") == "In":
                out += [str(v) for v in expr.get("values") or []]
    return out


def _selector_path(pod: dict, pod_path: str) -> str:
    if _selected_type(pod):
        return f"{pod_path}.nodeSelector"
    return (f"{pod_path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms")


def check(ctx) -> Iterator[Hit]:
    stated = ctx.get(VALUES_KEY) if ctx.has_values else None
    for name in stated if isinstance(stated, dict) else ():
        if lookup(str(name)):
            yield Hit(f"{VALUES_KEY}.{name}", f"{name} is catalogued already; its capacity there is sourced and "
                      "the stated one is not used", remediation=f"remove {VALUES_KEY}.{name}")
    for o, pod_path, pod in ctx.pod_templates():
        if o.is_test_hook:
            continue
        section = values_section(ctx, o, pod_path)
        gpu_pod = section == "raycluster.worker"
        type_key = "global.cluster.gpuInstanceType" if gpu_pod else f"{section}.instanceType"
        where = dict(obj=None) if section else dict(obj=o)
        req = _requests(pod)
        for name in _instance_types(pod):
            node = node_type(ctx, name)
            key = type_key if section else _selector_path(pod, pod_path)
            if node is None:
                if gpu_pod:
                    continue  # global.cluster.gpuInstanceType: GRPO613 reports it, once
                if section:
                    yield Hit(key, f"{o.kind} {o.name}: {unknown_type_message(name)}", **where)
                elif EC2_NAME.match(name) and _catalogued_family(name):
                    # a size the catalogue does not list in a family it does: likely a slip. A family it lacks
                    # (g4dn) says nothing about the manifest, and another cloud's machine name is no EC2 type.
                    yield Hit(key, f"{o.kind} {o.name}: {unknown_type_message(name)}; fit cannot be checked",
                              severity=Severity.WARNING, **where)
                continue
            yield from _fit(o, name, node, req, section, key, where)


def _catalogued_family(name: str) -> bool:
    family = name.partition(".")[0]
    return any(known.partition(".")[0] == family for known in INSTANCE_TYPES)


def _multi_node_ray_worker(o) -> bool:
    """Only Ray workers spread over several nodes talk NCCL across nodes (where EFA matters)."""
    groups = (o.obj.get("spec") or {}).get("workerGroupSpecs") or [] if o.kind == "RayCluster" else []
    return sum(int(g.get("replicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups) > 1


def _fit(o, name, node, req, section, key, where) -> Iterator[Hit]:
    res_key = f"{section}.resources" if section else key
    cpu, mem = req.get("cpu", 0), req.get("memory", 0) / 2**20
    if cpu * 1000 > node.allocatable_millicpu:
        yield Hit(f"{res_key}.cpu" if section else key,
                  f"{o.kind} {o.name} requests {cpu:g} CPU; {name} has "
                  f"{node.allocatable_millicpu / 1000:g} allocatable",
                  remediation=f"request at most {node.allocatable_millicpu}m or choose a larger instance type", **where)
    if mem > node.allocatable_memory_mib:
        yield Hit(f"{res_key}.memory" if section else key,
                  f"{o.kind} {o.name} requests {mem / 1024:.1f} GiB; {name} has "
                  f"{node.allocatable_memory_mib / 1024:.1f} GiB allocatable",
                  remediation=f"request at most {node.allocatable_memory_mib}Mi or choose a larger instance type",
                  **where)
    gpus = int(req.get("nvidia.com/gpu", 0))
    if gpus > node.gpus:
        yield Hit("global.cluster.gpusPerNode" if section == "raycluster.worker" else key,
                  f"{o.kind} {o.name} requests {gpus} GPUs; {name} has {node.gpus}", **where)
    efa = int(req.get("vpc.amazonaws.com/efa", 0))
    if efa and efa != node.efa:
        problem = "cannot schedule" if efa > node.efa else "leaves EFA interfaces idle (partial EFA)"
        yield Hit("global.cluster.efaPerNode" if section == "raycluster.worker" else key,
                  f"{o.kind} {o.name} requests {efa} vpc.amazonaws.com/efa; {name} exposes {node.efa}: {problem}",
                  remediation=f"request all {node.efa} EFA interfaces of {name}", **where)
    elif not efa and node.efa and gpus and _multi_node_ray_worker(o):
        yield Hit("global.cluster.efaPerNode" if section == "raycluster.worker" else key,
                  f"{o.kind} {o.name} spans several {name} nodes but requests no EFA; NCCL falls back to TCP",
                  severity=Severity.WARNING, remediation=f"request all {node.efa} EFA interfaces", **where)
