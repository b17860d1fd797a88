"""The explicit rule registry: code -> rule module. A rule module defines CODE, NAME, SEVERITY, SUMMARY,
DOC (markdown with ## What it does / ## Why is this bad? / ## Example / ## Fix; the first paragraph of Fix is
the default remediation), and check(ctx) -> Iterator[Hit].
Never reuse a code. tests/lint/test_registry.py checks every entry."""

from __future__ import annotations

from types import ModuleType

from . import (
    builtin_code_reward,
    capabilities,
    capacity,
    code_isolation,
    component_endpoints,
    default_sa_rbac,
    device_limits,
    disabled_component,
    engine_memory,
    eval_checkpoint_step,
    eval_phase,
    eval_server_heads,
    framework_image,
    host_path,
    image_pinning,
    job_build,
    literal_secret,
    namespace,
    network_policy_coverage,
    no_privilege_escalation,
    partial_node,
    pipeline_status,
    pod_seccomp,
    privileged_placement,
    probe_always_passes,
    probe_budget,
    ray_dashboard,
    ray_head_driver,
    ray_labels,
    ray_storage,
    release_namespace,
    reward_routing,
    reward_workers,
    sandbox_concurrency,
    service_account_token,
    sglang_context,
    shell_syntax,
    staging_datasets,
    staging_model,
    storage_capacity,
    suppression_reason,
    token_budget,
    tracking_secret,
    unpinned_download,
    unpinned_install,
    unrendered_placeholder,
    utility_pod_readiness,
    vllm_server_gpus,
    wait_loop,
    xtrace_secret,
)
from .batch import BATCH_MODULES

_MODULES: list[ModuleType] = [
    suppression_reason,
    namespace,
    component_endpoints,
    literal_secret,
    ray_labels,
    probe_budget,
    token_budget,
    capacity,
    image_pinning,
    code_isolation,
    job_build,
    pod_seccomp,
    no_privilege_escalation,
    capabilities,
    service_account_token,
    ray_storage,
    privileged_placement,
    network_policy_coverage,
    ray_dashboard,
    staging_datasets,
    staging_model,
    reward_routing,
    builtin_code_reward,
    eval_phase,
    eval_server_heads,
    shell_syntax,
    wait_loop,
    pipeline_status,
    xtrace_secret,
    probe_always_passes,
    ray_head_driver,
    device_limits,
    host_path,
    default_sa_rbac,
    utility_pod_readiness,
    release_namespace,
    unrendered_placeholder,
    unpinned_install,
    unpinned_download,
    *BATCH_MODULES,
    framework_image,
    tracking_secret,
    disabled_component,
    partial_node,
    storage_capacity,
    reward_workers,
    sandbox_concurrency,
    eval_checkpoint_step,
    vllm_server_gpus,
    engine_memory,
    sglang_context,
]

RULES: dict[str, ModuleType] = {m.CODE: m for m in _MODULES}


def doc_section(rule: ModuleType, title: str) -> str:
    """The body of `## <title>` in a rule's DOC."""
    parts = rule.DOC.split("## ")
    for part in parts:
        head, _, body = part.partition("\n")
        if head.strip().lower() == title.lower():
            return body.strip()
    return ""


def fix_text(rule: ModuleType) -> str:
    """The generic remediation: the first paragraph of the rule's `## Fix` section."""
    return doc_section(rule, "Fix").split("\n\n")[0].replace("\n", " ")


def get(code: str) -> ModuleType:
    if code not in RULES:
        raise KeyError(f"no such rule: {code!r}")
    return RULES[code]


def by_name_or_code(ident: str) -> ModuleType | None:
    for m in RULES.values():
        if ident.upper() == m.CODE or ident == m.NAME:
            return m
    return None
