"""The evaluation release (values/eval/eval.yaml on top of a run's values file), asserted on rendered objects.

Each test names the predecessor failure it prevents (review 000, batch 3 "Evaluation integrity").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from grpo_stack.eval.provenance import run_identity
from grpo_stack.eval.tasks import TASK_IDS, TASKS
from grpo_stack.lint.engine import lint_values
from grpo_stack.lint.rules._objects import selector_matches
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.conftest import VALUES_FILES, with_overrides

REPO = Path(__file__).resolve().parents[2]
OVERLAY = REPO / "values" / "eval" / "eval.yaml"
TASK_DIR = REPO / "charts/grpo-stack/charts/lm-eval/tasks"
NS = "team-a"


def user_values(name: str, overrides: dict | None = None, eval_phase: bool = True) -> dict:
    files = [load_values_file(REPO / "values" / f"{name}.yaml")] + ([load_values_file(OVERLAY)] if eval_phase else [])
    return with_overrides(merge_user_values(files), overrides)


_cache: dict = {}


def rendered(name: str, overrides: dict | None = None, eval_phase: bool = True, release: str = "grpo-eval"):
    key = repr((name, sorted((overrides or {}).items()), eval_phase, release))
    if key not in _cache:
        _cache[key] = render(user_values(name, overrides, eval_phase), release=release, namespace=NS)
    return _cache[key]


def one(r, kind: str, component: str) -> dict:
    found = [o.obj for o in r.of_kind(kind) if o.obj["metadata"]["labels"].get("app.kubernetes.io/name") == component]
    assert len(found) == 1, (kind, component, len(found))
    return found[0]


def pod_labels(r) -> list[dict]:
    out = []
    for o in r.objects:
        spec = o.obj.get("spec") or {}
        if o.kind == "RayCluster":
            groups = [spec.get("headGroupSpec") or {}, *(spec.get("workerGroupSpecs") or [])]
            out += [(g.get("template") or {}).get("metadata", {}).get("labels") or {} for g in groups]
        elif o.kind in ("Deployment", "Job", "StatefulSet"):
            out.append(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
        elif o.kind == "Pod":
            out.append(o.obj["metadata"].get("labels") or {})
    return out


def selectors(o) -> list[dict]:
    spec = o.obj.get("spec") or {}
    if o.kind == "NetworkPolicy":
        sels = [spec.get("podSelector") or {}]
        for rule in (spec.get("ingress") or []) + (spec.get("egress") or []):
            sels += [p["podSelector"] for p in rule.get("from", []) + rule.get("to", [])
                     if "podSelector" in p and "namespaceSelector" not in p]
        return sels
    if o.kind == "Service":
        return [{"matchLabels": spec.get("selector") or {}}]
    return []


NAMES = [p.stem for p in VALUES_FILES]


@pytest.mark.parametrize("name", NAMES)
def test_eval_release_leaves_the_training_release_alone(name):
    """Predecessor: enabling eval at install started vLLM with the training cluster (before any checkpoint, on a
    seventh GPU node). The evaluation release renders no RayCluster, shares no object with the training release,
    and none of its selectors (NetworkPolicy, Service) picks a training pod."""
    train = rendered(name, eval_phase=False, release="grpo")
    ev = rendered(name)
    assert not ev.of_kind("RayCluster") and train.of_kind("RayCluster")
    assert not [o for o in ev.objects if o.obj["metadata"]["labels"].get("app.kubernetes.io/component") == "job"]
    ours = {(o.kind, o.name) for o in ev.objects}
    assert not ours & {(o.kind, o.name) for o in train.objects}
    training_pods = pod_labels(train)
    for o in ev.objects:
        for sel in selectors(o):
            if not sel:
                continue  # an empty podSelector selects the policy's own namespace; checked below by name
            hits = [lbl for lbl in training_pods if selector_matches(sel, lbl)]
            assert not hits, (o.kind, o.name, sel, hits)
    kinds = {o.kind for o in ev.objects}
    assert {"Deployment", "Job", "Service"} <= kinds


@pytest.mark.parametrize("name", NAMES)
def test_eval_release_lints_clean(name):
    result = lint_values([str(REPO / "values" / f"{name}.yaml"), str(OVERLAY)], release="grpo-eval", namespace=NS)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    assert not [f for f in result.findings if f.severity.name == "ERROR"], [str(f.message) for f in result.findings]


def test_eval_server_size_is_checked_like_training(tmp_path):
    """The eval server's GPUs and memory are checked against its instance type like the training pods."""
    files = [REPO / "values/qwen3-8b.yaml", OVERLAY]
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump({"vllm": {"tensorParallel": 16, "resources": {"cpu": "32", "memory": "4000Gi"}}}))
    result = lint_values([*map(str, files), str(big)], release="grpo-eval", namespace=NS)
    hits = {(f.code, f.key_path) for f in result.findings}
    assert ("GRPO601", "vllm.resources.memory") in hits, hits
    assert any(c == "GRPO601" and "GPUs" in f.message for f in result.findings for c in [f.code]), hits


def test_rerun_with_other_tasks_renders_an_upgradable_release():
    """Predecessor: the lm-eval Job was a plain resource; changing its tasks within its TTL failed `helm upgrade`
    (a Job's pod template is immutable). Here the Job is named by the hash of what it measures: other tasks or
    another checkpoint give a new Job (Helm deletes the old one and creates it), the same spec the same Job, and
    every object kept across the upgrade keeps its immutable fields."""
    a = rendered("qwen3-8b", {"global.eval.checkpointStep": 100})
    b = rendered("qwen3-8b", {"global.eval.checkpointStep": 100, "lm-eval.tasks": ["gsm8k", "humaneval_p10"]})
    c = rendered("qwen3-8b", {"global.eval.checkpointStep": 200})
    again = render(user_values("qwen3-8b", {"global.eval.checkpointStep": 100}), release="grpo-eval", namespace=NS)
    job = {r: one(x, "Job", "lm-eval") for r, x in (("a", a), ("b", b), ("c", c), ("again", again))}
    assert len({job[k]["metadata"]["name"] for k in ("a", "b", "c")}) == 3
    assert job["again"] == job["a"]
    for x, y in ((a, b), (a, c)):
        kept = {(o.kind, o.name): o.obj for o in x.objects}
        for o in y.objects:
            old = kept.get((o.kind, o.name))
            if old is None:
                continue
            assert o.kind != "Job", "a Job kept under the same name would need its immutable template patched"
            if o.kind == "Deployment":
                assert old["spec"]["selector"] == o.obj["spec"]["selector"]
            if o.kind in ("ConfigMap", "Secret"):
                assert not old.get("immutable") and not o.obj.get("immutable")
    runs = {k: next(m["subPath"] for m in v["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
                    if m["name"] == "storage") for k, v in job.items()}
    assert runs["a"].startswith("eval-results/qwen3-8b-grpo/step-100/")
    assert runs["c"].startswith("eval-results/qwen3-8b-grpo/step-200/")
    assert len({runs["a"], runs["b"], runs["c"]}) == 3


@pytest.mark.parametrize("name", NAMES)
def test_lm_eval_budgets_are_trainings(name):
    """Predecessor: the two val-split paths generated at 24576 and 10240 tokens; lm-eval's context was typed
    separately from training's. Here both come from global.job.lengths, one value each."""
    lengths = user_values(name)["global"]["job"]["lengths"]
    c = one(rendered(name), "Job", "lm-eval")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in c["env"]}
    assert env["MAX_GEN_TOKS"]["value"] == str(lengths["maxResponse"])
    assert env["MAX_LENGTH"]["value"] == str(lengths["maxPrompt"] + lengths["maxResponse"])
    script = c["args"][0]
    assert '--gen_kwargs "max_gen_toks=${MAX_GEN_TOKS}"' in script and "max_length=${MAX_LENGTH}" in script
    for f in TASK_DIR.glob("*.yaml"):
        cfg = yaml.load(f.read_text(), Loader=_AnyTag)
        assert "max_gen_toks" not in (cfg.get("generation_kwargs") or {}), f"{f.name} sets its own budget"


def test_lm_eval_waits_exactly_as_long_as_vllm_may_start():
    """Predecessor: the readiness loop could not fail, and its budget was typed apart from vLLM's probe."""
    for over in (None, {"vllm.startupProbe.failureThreshold": 400}):
        r = rendered("qwen3-235b", over)
        probe = one(r, "Deployment", "vllm")["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
        budget = probe["initialDelaySeconds"] + probe["failureThreshold"] * probe["periodSeconds"]
        env = {e["name"]: e for e in one(r, "Job", "lm-eval")["spec"]["template"]["spec"]["containers"][0]["env"]}
        ref = env["READY_TIMEOUT_SECONDS"]["valueFrom"]["configMapKeyRef"]
        cm = next(o.obj for o in r.of_kind("ConfigMap") if o.name == ref["name"])
        assert cm["data"][ref["key"]] == str(budget)


@pytest.mark.parametrize("public", [False, True])
def test_lm_eval_reaches_only_dns_and_vllm(public):
    """Predecessor: lm-eval, which runs model-written code, could reach any public address on 443."""
    r = rendered("qwen3-8b", {"lm-eval.allowPublicHttps": public})
    pol = one(r, "NetworkPolicy", "lm-eval")
    blocks = [p for rule in pol["spec"]["egress"] for p in rule["to"] if "ipBlock" in p]
    assert bool(blocks) is public
    if public:
        assert "169.254.0.0/16" in blocks[0]["ipBlock"]["except"]
    env = {e["name"] for e in one(r, "Job", "lm-eval")["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert ("HF_HUB_OFFLINE" in env) is not public and ("HF_DATASETS_OFFLINE" in env) is not public


@pytest.mark.parametrize("step, path", [(None, "models/Qwen3-8B"),
                                        (100, "checkpoints/qwen3-8b-grpo/global_step_100/merged")])
def test_vllm_reads_only_the_evaluated_model(step, path):
    """Predecessor: the eval pods mounted the whole FSx volume. vLLM mounts exactly the evaluated model,
    read-only; a merged checkpoint passes the provenance gate first (the base model has no provenance)."""
    d = one(rendered("qwen3-8b", {"global.eval.checkpointStep": step}), "Deployment", "vllm")
    spec = d["spec"]["template"]["spec"]
    for c in spec["containers"] + spec.get("initContainers", []):
        storage = [m for m in c["volumeMounts"] if m["name"] == "storage"]
        assert storage == [{"name": "storage", "mountPath": "/model", "subPath": path, "readOnly": True}]
    assert spec["containers"][0]["args"][0] == "/model"
    assert [c["name"] for c in spec.get("initContainers", [])] == ([] if step is None else ["provenance"])


@pytest.mark.parametrize("name", NAMES)
def test_provenance_run_identity_is_the_charts(name):
    """grpo-eval merge writes run_identity(values); the gate compares it with what the chart renders: one object."""
    r = rendered(name, {"global.eval.checkpointStep": 7})
    init = one(r, "Deployment", "vllm")["spec"]["template"]["spec"]["initContainers"][0]
    env = {e["name"]: e["value"] for e in init["env"]}
    assert json.loads(env["EXPECTED_RUN"]) == run_identity(user_values(name)["global"]["job"])
    assert env["EXPECTED_STEP"] == "7"


class _AnyTag(yaml.SafeLoader):
    pass


_AnyTag.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node))


def test_pass_at_k_tasks_are_distinct_and_meaningful():
    """Predecessor: humaneval, humaneval_p4 and humaneval_p10 collapsed onto one key. Each shipped pass@k task has
    its own id, as many samples per problem as its largest k, and samples that differ (do_sample, temperature > 0)
    so pass@k is not pass@1 repeated."""
    shipped = {t.id for t in TASKS.values() if t.shipped}
    files = {yaml.load(f.read_text(), Loader=_AnyTag)["task"]: f for f in TASK_DIR.glob("*.yaml")
             if "task" in yaml.load(f.read_text(), Loader=_AnyTag)}
    assert set(files) == shipped
    for tid in shipped:
        cfg = yaml.load(files[tid].read_text(), Loader=_AnyTag)
        t = TASKS[tid]
        assert cfg["repeats"] == t.samples and max(t.k) <= t.samples
        assert cfg["metric_list"][0]["k"] == list(t.k)
        assert cfg["generation_kwargs"]["do_sample"] is True and cfg["generation_kwargs"]["temperature"] > 0
    from grpo_stack.schema.components import LmEval
    assert tuple(LmEval.model_fields["tasks"].annotation.__args__[0].__args__) == TASK_IDS
