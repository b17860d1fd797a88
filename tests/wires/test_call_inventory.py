"""Every cross-component call of the release has a test that drives it with its real caller (or checks it against
its real peer's own models); every call leaving the release is in a closed list with its reason.

The calls come from the rendered release itself (tests/wires/inventory.py): each URL in env, command or args, or
handed to the trainer from job.json, that names a Service of the release, and each flow of the release's flow
list (every NetworkPolicy is rendered from it). The releases: every shipped values file, the evaluation release,
and everything switched on (tests/chart/test_network_flows.py's EVERYTHING) for verl and for miles. A new Service
URL, a new flow or a new caller fails here until WIRES names the test that drives it.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from pathlib import Path

import pytest
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.chart.test_network_flows import EVERYTHING
from tests.conftest import NAMESPACE, RELEASE, VALUES_FILES
from tests.wires import inventory

REPO = Path(__file__).resolve().parents[2]

# (caller, called component, path) -> the test that drives that call with its real caller, as path::function.
WIRES = {
    ("ray:verl", "reward-service", "/score"):
        "tests/startup/test_reward_function.py::test_verl_loads_the_baked_client_and_scores_real_samples",
    ("ray:miles", "reward-service", "/score"):
        "tests/miles/test_miles_reward_dispatch.py::test_right_answer_scores_one_and_wrong_zero_through_miles_dispatch",
    ("reward-service", "sandbox-fusion", "/run_code"):
        "tests/wires/test_sandbox_wire.py::test_every_request_and_reply_fits_sandbox_fusions_models",
    ("lm-eval", "vllm", "/v1/completions"):
        "tests/wires/test_lmeval_wire.py::test_every_request_fits_vllms_completion_request",
    # The Job script's readiness loop, run as rendered before lm-eval starts.
    ("lm-eval", "vllm", "/v1/models"):
        "tests/wires/test_lmeval_wire.py::test_every_request_goes_to_the_served_path_and_model",
    ("reward-service-test", "reward-service", "/score"):
        "tests/wires/test_hook_wires.py::test_reward_service_hook_against_the_real_service",
    ("sandbox-fusion-test", "sandbox-fusion", "/run_code"):
        "tests/wires/test_hook_wires.py::test_sandbox_hook_fits_sandbox_fusions_models",
    ("vllm-test", "vllm", "/v1/models"): "tests/wires/test_hook_wires.py::test_vllm_hook_lists_the_served_model",
}
# Mapped tests that land with another change; absent they are reported, present they are checked like the rest.
PENDING: dict[str, str] = {}

# Calls to a URL outside the release: (caller, the env var / flag that carries it) -> why no test of ours drives it.
LEAVING = {
    ("ray:verl", "GRPO_REWARD_URL"): "global.job.reward.kind external: the user's own scorer; our side of the wire "
                                     "is the baked verl client (tests/reward/test_reward_verl_client.py)",
    ("ray:miles", "GRPO_REWARD_URL"): "global.job.reward.kind external: the user's own scorer, same client env",
    ("ray:miles", "--rm-url"): "global.job.reward.kind external: miles posts to the user's own scorer",
}
# Flows whose other end is outside the release, or that are no application call: (from, to) -> why.
BOUNDARY = {
    ("ray", "ray"): "one component: Ray's own GCS, object-store and NCCL traffic among the cluster's pods",
    ("ray", "public"): "leaves the cluster: the trackers (wandb, mlflow) and an external reward URL",
    ("ray", "namespace"): "global.job.reward.kind external with a URL naming a Service outside this release",
    ("fsx-utils", "public"): "leaves the cluster: model and dataset downloads from the Hugging Face Hub",
    ("lm-eval", "public"): "leaves the cluster: benchmark data from the Hub (lm-eval.allowPublicHttps)",
    ("any-namespace", "ray"): "from outside the release: Prometheus scrapes Ray's metrics port",
    ("any-namespace", "reward-service"): "from outside the release: Prometheus scrapes the metrics port",
    ("namespace", "ray"): "from outside the release: users reach the Ray dashboard (raycluster.dashboard.exposed)",
    ("kuberay-operator", "ray"): "from outside the release: in job mode the KubeRay operator polls the RayJob's "
                                 "status from the dashboard's job API; no dashboard answers in the control-plane "
                                 "tier (kwok runs no container), tests/cluster/test_job_mode_live.py says where that "
                                 "path stops",
    ("ray-head", "apiserver"): "leaves the release: the supervisor posts Kubernetes Events (global.job.supervision."
                               "events); its client is driven against the real API server with the head account's "
                               "token in tests/cluster/test_monitoring_admission.py",
    ("prometheus", "vllm"): "from outside the release: Prometheus scrapes vLLM's /metrics (global.monitoring); the "
                            "names scraped are checked against vLLM 0.24.0's source (tests/monitoring/test_queries.py)",
}
NAME_RESOLUTION = "dns"
# job.json URLs the builder does not hand to the trainer -> why.
JOB_SPEC_ONLY = {
    "endpoints.sandbox": "reward.kind sandbox: the builder only checks the sandbox is in the release; code is "
                         "scored through the reward service's code routes",
    "job.reward.url": "the value endpoints.reward is made from; the trainer gets endpoints.reward",
}


def _releases() -> dict[str, dict]:
    out = {p.stem: load_values_file(p).data for p in VALUES_FILES}
    out["eval"] = merge_user_values([load_values_file(REPO / "values/qwen3-8b.yaml"),
                                     load_values_file(REPO / "values/eval/eval.yaml")])
    for name in ("qwen3-235b", "miles-qwen3-4b"):
        values = copy.deepcopy(out[name])
        for dotted, value in EVERYTHING.items():
            node = values
            *parents, leaf = dotted.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
        out[f"{name}+everything"] = values
    return out


@pytest.fixture(scope="module")
def releases() -> dict:
    return {name: render(values, release=RELEASE, namespace=NAMESPACE) for name, values in _releases().items()}


def unmapped(rendered) -> list[str]:
    """Why each call of `rendered` has no test or listed reason; [] when every call is accounted for."""
    calls = inventory.url_calls(rendered, NAMESPACE)
    found = [f"{c.caller} -> {c.callee} {c.path} ({c.via}): no test drives it; add it to WIRES"
             for c in calls if c.callee != "outside" and c.key not in WIRES]
    found += [f"{c.caller} -> {c.url} ({c.via}): leaves the release; add ({c.caller!r}, {c.field!r}) to LEAVING "
              "with its reason" for c in calls if c.callee == "outside" and (c.caller, c.field) not in LEAVING]
    driven = {(caller.split(":")[0], callee) for caller, callee, _path in WIRES}
    for flow in inventory.flows(rendered):
        pair = (flow.source, flow.target)
        if flow.target != NAME_RESOLUTION and pair not in BOUNDARY and pair not in driven:
            found.append(f"flow {flow.source} -> {flow.target} {list(flow.ports)} ({flow.why}): admitted, but no "
                         "test drives a call from that caller to that peer; add it to WIRES, or drop the flow")
    flow_pairs = {(f.source, f.target) for f in inventory.flows(rendered)}
    found += [f"{c.caller} -> {c.callee} ({c.via}): no flow admits it; the NetworkPolicies would drop it"
              for c in calls if c.callee != "outside" and (c.caller.split(":")[0], c.callee) not in flow_pairs]
    handed = {c.url for c in calls if c.caller.startswith("ray")}
    found += [f"job.json {key} = {url}: the trainer is never handed it; list it in JOB_SPEC_ONLY with why"
              for key, url in inventory.job_spec_urls(rendered).items() if url not in handed
              and key not in JOB_SPEC_ONLY]
    return sorted(set(found))


@pytest.mark.parametrize("name", list(_releases()))
def test_every_call_is_driven_by_a_test_or_listed(name, releases):
    assert unmapped(releases[name]) == []


def test_the_releases_hold_every_mapped_call(releases):
    """No stale entry: each WIRES call still occurs in some release, each LEAVING and BOUNDARY entry too."""
    calls = {c for r in releases.values() for c in inventory.url_calls(r, NAMESPACE)}
    pairs = {(f.source, f.target) for r in releases.values() for f in inventory.flows(r)}
    assert set(WIRES) - {c.key for c in calls} == set()
    assert set(LEAVING) - {(c.caller, c.field) for c in calls if c.callee == "outside"} == set()
    assert set(BOUNDARY) - pairs == set()


def _functions(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("call", sorted(WIRES), ids=" ".join)
def test_each_mapped_test_exists(call):
    path, _, function = WIRES[call].partition("::")
    if not (REPO / path).exists():
        if path in PENDING:
            pytest.skip(f"{path} not in this checkout yet: {PENDING[path]}")
        pytest.fail(f"{path} does not exist (mapped for {call})")
    assert not function or function in _functions(REPO / path), f"{WIRES[call]} does not exist"


def test_pending_entries_are_still_pending():
    """Once a pending test lands, it is checked like the others: drop it from PENDING."""
    assert [p for p in PENDING if (REPO / p).exists()] == []


def _with_env(rendered, kind: str, name_part: str, env: dict) -> inventory.Rendered:
    objects = []
    for o in rendered.objects:
        if o.kind == kind and name_part in o.name:
            obj = copy.deepcopy(o.obj)
            spec = obj["spec"]["template"]["spec"] if kind != "Pod" else obj["spec"]
            spec["containers"][0].setdefault("env", []).extend({"name": k, "value": v} for k, v in env.items())
            o = dataclasses.replace(o, obj=obj)
        objects.append(o)
    return dataclasses.replace(rendered, objects=tuple(objects))


@pytest.mark.parametrize("kind, name_part, env, expected", [
    # A new path on a known Service, a known path from a new caller, a URL leaving the release.
    ("Job", "lm-eval", {"CHAT_URL": f"http://{RELEASE}-vllm.{NAMESPACE}.svc.cluster.local:8000/v1/chat/completions"},
     "lm-eval -> vllm /v1/chat/completions"),
    ("Deployment", "reward-service", {"VLLM": f"http://{RELEASE}-vllm:8000/v1/models"}, "reward-service -> vllm"),
    ("Deployment", "reward-service", {"JUDGE_URL": "https://judge.example.com/score"}, "JUDGE_URL"),
    ("Deployment", "reward-service", {"VLLM_HOST": f"{RELEASE}-vllm.{NAMESPACE}:8000"}, "reward-service -> vllm"),
])
def test_a_new_call_without_a_test_fails(releases, kind, name_part, env, expected):
    rendered = releases["qwen3-235b+everything"]
    assert unmapped(rendered) == []
    found = unmapped(_with_env(rendered, kind, name_part, env))
    assert any(expected in f for f in found), found


def test_an_admitted_flow_nobody_calls_fails(releases):
    rendered = releases["qwen3-235b+everything"]
    (deny,) = [o for o in rendered.objects if inventory.FLOWS_ANNOTATION in
               (o.obj["metadata"].get("annotations") or {})]
    obj = copy.deepcopy(deny.obj)
    listed = obj["metadata"]["annotations"][inventory.FLOWS_ANNOTATION]
    extra = '{"from": "vllm", "to": "reward-service", "ports": [{"port": 8000}], "why": "unused"}'
    obj["metadata"]["annotations"][inventory.FLOWS_ANNOTATION] = listed[:-1] + ", " + extra + "]"
    changed = dataclasses.replace(rendered, objects=tuple(dataclasses.replace(o, obj=obj) if o is deny else o
                                                          for o in rendered.objects))
    assert any("flow vllm -> reward-service" in f for f in unmapped(changed))
