"""The explicit rule registry: code -> rule module. A rule module defines CODE, NAME, SEVERITY, CATEGORY (one of
CATEGORIES), SUMMARY, DOC (markdown with ## What it does / ## Why is this bad? / ## Example / ## Fix; the first
paragraph of Fix is the default remediation), and check(ctx) -> Iterator[Hit].
Never reuse a code. tests/lint/test_registry.py checks every entry."""

from __future__ import annotations

from types import ModuleType

from ...errors import MAX_MESSAGE, clip
from ..finding import Finding, Hit, Severity
from . import (
    api_exposure,
    autoscaler_conflict,
    autoscaler_unrequested,
    backend_readiness,
    builtin_code_reward,
    capabilities,
    capacity,
    claim_never_binds,
    code_execution_identity,
    code_isolation,
    component_endpoints,
    data_layout,
    deadline_save,
    default_sa_rbac,
    dev_shm,
    device_limits,
    disabled_component,
    egress_blocks_dns,
    egress_blocks_downloads,
    engine_memory,
    eval_checkpoint_step,
    eval_phase,
    eval_server_heads,
    framework_image,
    gpu_memory,
    gpu_rollout_surge,
    gpu_visibility_override,
    gpus_never_used,
    host_namespaces,
    host_network_dns,
    host_path,
    image_pinning,
    image_reference,
    ingress_rewrite_collapses,
    init_output_lost,
    job_build,
    kuberay_fields,
    launcher_world_size,
    literal_secret,
    model_source_empty,
    namespace,
    namespace_label_unset,
    network_policy_coverage,
    no_learning_signal,
    no_privilege_escalation,
    node_selector_contradiction,
    not_ready_addresses,
    notebook_auth_off,
    partial_node,
    peer_pod_hostname,
    pipeline_status,
    pod_hardening,
    pod_monitor_port,
    pod_seccomp,
    pod_security_enforced,
    privileged_placement,
    probe_always_passes,
    probe_budget,
    probe_port,
    ray_dashboard,
    ray_group_names,
    ray_head_driver,
    ray_head_gpu_node,
    ray_labels,
    ray_storage,
    rayjob_cluster_kept,
    read_only_cache,
    release_namespace,
    restart_forever,
    reward_deadline,
    reward_routing,
    reward_transport,
    reward_workers,
    rollout_refused,
    rwo_claim_shared,
    sandbox_concurrency,
    server_requests,
    service_account_token,
    service_monitor_selector,
    service_selector_overreach,
    service_target_port,
    serving_readiness,
    serving_startup_budget,
    sglang_context,
    shared_volume_writable,
    shell_syntax,
    staging_datasets,
    staging_model,
    state_ephemeral,
    storage_capacity,
    suppression_reason,
    token_budget,
    tracking_secret,
    unpinned_download,
    unpinned_install,
    unrendered_placeholder,
    url_credentials,
    url_port_not_served,
    utility_pod_readiness,
    vllm_server_gpus,
    wait_loop,
    weights_ephemeral,
    xtrace_secret,
)
from .batch import BATCH_MODULES

_MODULES: list[ModuleType] = [
    suppression_reason,
    namespace,
    component_endpoints,
    literal_secret,
    url_credentials,
    ray_labels,
    probe_budget,
    serving_readiness,
    serving_startup_budget,
    not_ready_addresses,
    token_budget,
    capacity,
    node_selector_contradiction,
    image_pinning,
    image_reference,
    code_isolation,
    code_execution_identity,
    job_build,
    kuberay_fields,
    pod_hardening,
    pod_seccomp,
    no_privilege_escalation,
    capabilities,
    service_account_token,
    ray_storage,
    shared_volume_writable,
    privileged_placement,
    network_policy_coverage,
    ray_dashboard,
    reward_transport,
    staging_datasets,
    data_layout,
    staging_model,
    reward_routing,
    reward_deadline,
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
    gpu_visibility_override,
    host_path,
    default_sa_rbac,
    utility_pod_readiness,
    release_namespace,
    unrendered_placeholder,
    unpinned_install,
    unpinned_download,
    *BATCH_MODULES,
    framework_image,
    no_learning_signal,
    tracking_secret,
    disabled_component,
    partial_node,
    ray_head_gpu_node,
    gpus_never_used,
    dev_shm,
    gpu_rollout_surge,
    rollout_refused,
    init_output_lost,
    rwo_claim_shared,
    weights_ephemeral,
    read_only_cache,
    storage_capacity,
    reward_workers,
    sandbox_concurrency,
    eval_checkpoint_step,
    deadline_save,
    vllm_server_gpus,
    engine_memory,
    gpu_memory,
    sglang_context,
    service_selector_overreach,
    api_exposure,
    host_network_dns,
    egress_blocks_dns,
    egress_blocks_downloads,
    probe_port,
    restart_forever,
    server_requests,
    service_target_port,
    launcher_world_size,
    host_namespaces,
    state_ephemeral,
    backend_readiness,
    peer_pod_hostname,
    claim_never_binds,
    service_monitor_selector,
    model_source_empty,
    pod_security_enforced,
    autoscaler_conflict,
    autoscaler_unrequested,
    url_port_not_served,
    ingress_rewrite_collapses,
    rayjob_cluster_kept,
    ray_group_names,
    notebook_auth_off,
    namespace_label_unset,
    pod_monitor_port,
]

RULES: dict[str, ModuleType] = {m.CODE: m for m in _MODULES}

# Rules that read only the job spec and what the builder makes of it (ctx.job_spec, ctx.spec, ctx.built,
# ctx.build_error), never the values files, the merged values or the rendered objects; reward routing reads its
# release-level values through ctx.release_value, which the chart renders into the job spec (release.values),
# so it reads the same facts there. The in-pod submit runs
# exactly these over the job ConfigMap the Ray head mounts (grpo_stack.jobgate), so values given with
# `helm install --set` or a hand-edited ConfigMap meet the checks grpo-lint runs. tests/lint/test_job_rules.py
# checks that each finds from the job spec alone what the whole lint finds.
JOB_RULES: dict[str, ModuleType] = {code: rule for code, rule in RULES.items()
                                    if rule in (job_build, *BATCH_MODULES, reward_routing, deadline_save)}


def finding(code: str, severity: Severity, hit: Hit, file: str, line: int, column: int) -> Finding:
    """A rule's hit as the located finding every consumer prints (grpo-lint, the in-pod gate)."""
    rule = RULES.get(code)
    remediation = hit.remediation or (fix_text(rule) if rule else "")
    name = rule.NAME if rule else code
    # Messages quote values (a namespace, an image); a hostile value must not flood the output.
    return Finding(file, line, column, code, name, severity, hit.key_path and clip(hit.key_path, MAX_MESSAGE),
                   clip(hit.message, MAX_MESSAGE), clip(remediation, MAX_MESSAGE))


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


# What a rule protects: `--select` / `--ignore` take these as well as codes and code prefixes.
CATEGORIES = ("correctness", "security", "hardening", "cost")
# Checks the engine runs that are not registry modules: (code, category).
ENGINE_CODES = {"GRPO002": "correctness"}  # object-schema


def codes_matching(name: str) -> set[str]:
    """The codes a `--select` / `--ignore` entry names: ALL, a category, a rule name, a code or a code prefix
    (GRPO8, GRPO81), as ruff reads its selectors. A name that matches nothing raises ValueError."""
    every = {**{code: rule.CATEGORY for code, rule in RULES.items()}, **ENGINE_CODES}
    ident = name.strip()
    if ident.upper() == "ALL":
        return set(every)
    if ident.lower() in CATEGORIES:
        return {code for code, category in every.items() if category == ident.lower()}
    rule = by_name_or_code(ident)
    if rule is not None:
        return {rule.CODE}
    prefix = ident.upper()
    found = {code for code in every if prefix.startswith("GRPO") and code.startswith(prefix)}
    if not found:
        raise ValueError(f"unknown rule, code prefix or category {ident!r} (categories: {', '.join(CATEGORIES)}; "
                         "see grpo-lint rules)")
    return found


def selection(select: str | None, ignore: str | None) -> frozenset[str] | None:
    """The codes to run for comma-separated `--select` (default: all) minus `--ignore`; None when neither is
    given (every rule). Unknown entries raise ValueError."""
    if not select and not ignore:
        return None

    def names(arg: str | None) -> list[str]:
        return [n for n in (arg or "").split(",") if n.strip()]

    chosen = set().union(*(codes_matching(n) for n in names(select))) if select else codes_matching("ALL")
    for n in names(ignore):
        chosen -= codes_matching(n)
    return frozenset(chosen)
