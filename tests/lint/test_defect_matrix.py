"""Defect x embedding matrix: every reviewed defect class, written into every place another project puts a pod.

grpo-lint is judged on manifests it has never seen, written by projects with their own label schemes, their own
shell idioms and their own controllers. Each defect class below is built by a small builder into a pod template;
each embedding wraps that template the way a workload, a KubeRay / JobSet / LeaderWorkerSet resource, a custom
resource, a `kubectl get -o yaml` dump, a `kind: List`, envsubst output or a multi-document file does. For every
cell the defect must be reported with the class's code at the object path where it sits, and the fixed
counterpart must carry no finding of that code. Labels and names come from other projects' conventions (never
this chart's `app.kubernetes.io/component`), so no rule can key on how grpo-stack labels its own pods.

Failures this prevents: a rule that recognises its defect only in the kinds or labels our chart renders (the
predecessor's sandbox and lm-eval driver escaped every isolation check because they were labelled their own
way and switched code execution on inside `sh -c`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from grpo_stack.lint.release import ManifestFile, lint_release
from grpo_stack.lint.suppress import LintConfig

NS = "ml-infra"
OTHER_NS = "research"
# Other projects' label schemes: rules must never depend on this chart's labels.
LABEL_SCHEMES = [
    {"app": "my-sandbox", "component": "executor"},
    {"app.kubernetes.io/name": "scorer", "team": "rl"},
    {"run": "eval-driver"},
    {"k8s-app": "utils", "tier": "backend"},
]
PINNED = "registry.example.com/rl/worker:build-417"
# Embeddings that differ in how the file is written, for classes about objects that hold no pod.
WRAPPERS = ("kubectl-dump", "list-of-dumps", "envsubst-output", "multi-document", "deployment")
SANDBOX_IMAGE = "volcengine/sandbox-fusion:server-20250609"


# ------------------------------------------------------------------------------------------------ pod builders
def hardened_container(name: str = "main", image: str = PINNED) -> dict[str, Any]:
    """A container no rule of the matrix objects to: the neutral ground every defect is written onto."""
    return {
        "name": name, "image": image, "imagePullPolicy": "IfNotPresent",
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "2Gi"}},
    }


def hardened_pod() -> dict[str, Any]:
    return {
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [hardened_container()],
    }


@dataclass
class Case:
    """One side (defective or fixed) of a defect class: the pod, and what the set holds beside it."""
    pod: dict[str, Any] = field(default_factory=hardened_pod)
    labels: dict[str, str] = field(default_factory=lambda: dict(LABEL_SCHEMES[0]))
    annotations: dict[str, str] = field(default_factory=dict)
    namespace: str | None = NS  # the host object's namespace (None: unset)
    companions: list[dict[str, Any]] = field(default_factory=list)  # objects in the same file
    other_files: list[list[dict[str, Any]]] = field(default_factory=list)  # further files of the release
    head_params: dict[str, str] | None = None  # rayStartParams when the pod is a Ray head
    entrypoint: str = "python -m train"  # a RayJob's entrypoint
    workload: dict[str, Any] = field(default_factory=dict)  # extra fields of a Deployment's spec
    gpu_workers: bool = False  # a Ray cluster's other (worker) group requests GPUs

    @property
    def main(self) -> dict[str, Any]:
        return self.pod["containers"][0]


def netpol(labels: dict[str, str], types=("Ingress", "Egress"), ns: str | None = NS) -> dict[str, Any]:
    meta = {"name": "isolate-executor", **({"namespace": ns} if ns else {})}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta,
            "spec": {"podSelector": {"matchLabels": dict(labels)}, "policyTypes": list(types),
                     "egress": [{"to": [{"ipBlock": {"cidr": "10.20.0.0/16"}}], "ports": [{"port": 8080}]}]}}


def service(name: str, selector: dict[str, str], ns: str | None = NS) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"selector": dict(selector), "ports": [{"port": 8080, "targetPort": 8080}]}}


def configmap(name: str, ns: str | None) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"mode": "eval"}}


def shell(script: str, sh: str = "bash") -> dict[str, Any]:
    return {"command": [sh, "-c"], "args": [script]}


def with_script(script: str, sh: str = "bash") -> Case:
    case = Case()
    case.main.update(shell(script, sh))
    return case


# ------------------------------------------------------------------------------------------------ defect classes
@dataclass(frozen=True)
class Defect:
    id: str
    code: str
    bad: Callable[[], Case]
    fixed: Callable[[], Case]
    where: str  # path of the finding: relative to the pod spec, or "@<kind>:<path>" in the named companion object
    only: tuple[str, ...] = ()  # embeddings the class applies to (empty: all)
    skip_reason: str = ""


# Every embedding but the Ray head and worker containers (ids of EMBEDDINGS below).
NOT_RAY_CONTAINERS = ("pod", "deployment", "statefulset", "job", "cronjob", "rayjob-submitter", "jobset",
                      "lws-leader", "lws-worker", "custom-crd", "pytorchjob-worker", "volcano-task", "kubectl-dump",
                      "list-of-dumps", "envsubst-output", "multi-document")


def code_runner(recognise: Callable[[Case], None], *, token=True, policy=False, labels_index=0) -> Case:
    """A pod that runs model-written code, recognised by `recognise`; isolated except where asked."""
    case = Case(labels=dict(LABEL_SCHEMES[labels_index]))
    recognise(case)
    if token:
        del case.pod["automountServiceAccountToken"]
    if policy:
        case.companions.append(netpol(case.labels))
    return case


def by_image(case: Case) -> None:
    case.main["image"] = SANDBOX_IMAGE


def by_env(case: Case) -> None:
    case.main["env"] = [{"name": "HF_ALLOW_CODE_EVAL", "value": "true"}]


def by_shell_env(case: Case) -> None:
    case.main.update(shell("set -eu\nexport HF_ALLOW_CODE_EVAL=1\npython -m my_eval.run --out /tmp/out\n", "sh"))


def by_inline_env(case: Case) -> None:
    case.main.update(shell("HF_ALLOW_CODE_EVAL=1 python3 evaluate.py --suite code", "sh"))


def by_unsafe_flag(case: Case) -> None:
    case.main["command"] = ["python", "-m", "lm_eval"]
    case.main["args"] = ["--model", "local-completions", "--tasks", "gsm8k", "--confirm_run_unsafe_code"]


def by_code_task(case: Case) -> None:
    case.main.update(shell("set -euo pipefail\nlm_eval --model vllm --tasks mbpp_plus,gsm8k "
                           "--output_path /tmp/out\n"))


def by_mirrored_image(case: Case) -> None:
    case.main["image"] = "123456789012.dkr.ecr.us-west-2.amazonaws.com/rl-sandbox-fusion:server-20250609"


def by_server_module(case: Case) -> None:
    """SandboxFusion built into a project's own image and started by module name."""
    case.main["command"] = ["uvicorn", "sandbox.server.server:app", "--host", "0.0.0.0", "--port", "8080"]


def by_envfrom_configmap(case: Case) -> None:
    case.main["envFrom"] = [{"configMapRef": {"name": "eval-flags"}}]
    case.companions.append({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "eval-flags", "namespace": NS},
                            "data": {"HF_ALLOW_CODE_EVAL": "1", "TASKS": "gsm8k"}})


def by_configmap_key(case: Case) -> None:
    case.main["env"] = [{"name": "HF_ALLOW_CODE_EVAL",
                         "valueFrom": {"configMapKeyRef": {"name": "eval-flags", "key": "allow_code"}}}]
    case.companions.append({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "eval-flags", "namespace": NS}, "data": {"allow_code": "true"}})


def by_login_shell_flag(case: Case) -> None:
    case.main["command"] = ["/bin/bash", "-lc", "accelerate launch -m lm_eval --model hf --tasks humaneval "
                            "--confirm_run_unsafe_code --output_path /tmp/out"]


def by_tasks_from_env(case: Case) -> None:
    case.main["env"] = [{"name": "EVAL_TASKS", "value": "gsm8k,instruct_humaneval"}]
    case.main.update(shell('set -euo pipefail\npython -m lm_eval --model vllm --tasks "${EVAL_TASKS}" '
                           '--output_path /tmp/out\n'))


def by_bigcode_flag(case: Case) -> None:
    case.main["command"] = ["accelerate", "launch", "main.py", "--model", "/models/policy", "--tasks",
                            "multiple-py", "--allow_code_execution"]


RECOGNISERS = {"image": by_image, "mirrored-image": by_mirrored_image, "server-module": by_server_module,
               "env": by_env, "envfrom-configmap": by_envfrom_configmap, "configmap-key": by_configmap_key,
               "shell-export": by_shell_env, "shell-inline": by_inline_env, "unsafe-flag": by_unsafe_flag,
               "code-task": by_code_task, "login-shell": by_login_shell_flag, "tasks-from-env": by_tasks_from_env,
               "bigcode-flag": by_bigcode_flag}


def isolated_runner(recognise, labels_index=0) -> Callable[[], Case]:
    return lambda: code_runner(recognise, token=False, policy=True, labels_index=labels_index)


def pvc_volume(name="shared", claim="team-fsx") -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


def writable_mount(sub: str | None, read_only=False, mount="/workspace", extra: Callable[[Case], None] | None = None):
    def build() -> Case:
        case = code_runner(by_image, token=False, policy=True, labels_index=1)
        case.pod["volumes"] = [pvc_volume()]
        m = {"name": "shared", "mountPath": mount, **({"subPath": sub} if sub else {})}
        if read_only:
            m["readOnly"] = True
        case.main["volumeMounts"] = [m]
        if extra:
            extra(case)
        return case
    return build


def reads_model_under_mount(case: Case) -> None:
    case.main["args"] = ["--model-path", "/workspace/models/qwen3-8b", "--port", "8080"]


def own_output_only(case: Case) -> None:
    case.pod["volumes"].append(pvc_volume("results"))
    case.main["volumeMounts"][0]["readOnly"] = True
    case.main["volumeMounts"].append({"name": "results", "mountPath": "/out", "subPath": "eval-results/run-7"})
    case.main["args"] = ["--model-path", "/workspace/models/qwen3-8b", "--out", "/out"]


def trainer_writes_checkpoints_below(case: Case) -> None:
    """Another workload of the set keeps its checkpoints under the directory the runner mounts writable."""
    trainer = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "trainer", "namespace": NS},
               "spec": {"template": {"spec": {**hardened_pod(), "restartPolicy": "Never",
                                              "volumes": [pvc_volume()]}}}}
    trainer["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "shared", "mountPath": "/ckpt", "subPath": "projects/rl/checkpoints"}]
    case.companions.append(trainer)


def privileged(case: Case) -> None:
    case.main["securityContext"] = {"privileged": True}


def _no_policy() -> Case:
    return code_runner(by_image, token=False, labels_index=2)


def _ingress_only_policy() -> Case:
    case = code_runner(by_image, token=False, labels_index=2)
    case.companions.append(netpol(case.labels, types=("Ingress",)))
    return case


def _policy_for_other_pods() -> Case:
    case = code_runner(by_image, token=False, labels_index=2)
    case.companions.append(netpol({"app": "someone-else"}))
    return case


def _policy_in_other_namespace() -> Case:
    case = code_runner(by_image, token=False, labels_index=2)
    case.companions.append(netpol(case.labels, ns=OTHER_NS))
    return case


def _isolated_by_implied_egress() -> Case:
    """policyTypes left out: Kubernetes adds Egress because the policy has egress rules."""
    case = code_runner(by_image, token=False, labels_index=2)
    policy = netpol(case.labels)
    del policy["spec"]["policyTypes"]
    case.companions.append(policy)
    return case


def _isolated_by_namespace_default_deny() -> Case:
    case = code_runner(by_image, token=False, labels_index=2)
    policy = netpol({})
    policy["spec"]["podSelector"] = {}
    case.companions.append(policy)
    return case


def _privileged_runner() -> Case:
    case = code_runner(by_code_task, token=False, policy=True, labels_index=3)
    privileged(case)
    return case


DEFECTS: list[Defect] = []
for _name, _rec in RECOGNISERS.items():
    DEFECTS.append(Defect(f"801-token-by-{_name}", "GRPO801",
                          (lambda r=_rec: code_runner(r, policy=True)), isolated_runner(_rec),
                          "automountServiceAccountToken"))
DEFECTS += [
    Defect("801-writable-volume", "GRPO801", writable_mount(None), writable_mount(None, read_only=True),
           "containers.0.volumeMounts.0"),
    Defect("801-writable-model-subpath", "GRPO801", writable_mount("data/models/qwen3-8b"),
           writable_mount("data/models/qwen3-8b", read_only=True), "containers.0.volumeMounts.0"),
    Defect("801-writable-parent-of-model-path", "GRPO801", writable_mount("projects", extra=reads_model_under_mount),
           writable_mount("projects", extra=own_output_only), "containers.0.volumeMounts.0"),
    Defect("801-writable-parent-of-checkpoints", "GRPO801",
           writable_mount("projects/rl", extra=trainer_writes_checkpoints_below),
           writable_mount("projects/rl", read_only=True, extra=trainer_writes_checkpoints_below),
           "containers.0.volumeMounts.0"),
    Defect("801-no-networkpolicy", "GRPO801", _no_policy, isolated_runner(by_image, 2), ""),
    Defect("801-ingress-only-networkpolicy", "GRPO801", _ingress_only_policy, isolated_runner(by_image, 2), ""),
    Defect("801-networkpolicy-selects-others", "GRPO801", _policy_for_other_pods, isolated_runner(by_image, 2), ""),
    Defect("801-networkpolicy-other-namespace", "GRPO801", _policy_in_other_namespace, _isolated_by_implied_egress,
           ""),
    Defect("801-no-policy-vs-namespace-default-deny", "GRPO801", _no_policy, _isolated_by_namespace_default_deny, ""),
    Defect("801-privileged", "GRPO801", _privileged_runner, isolated_runner(by_code_task, 3),
           "containers.0.securityContext"),
]


# --- release: namespaces, URLs, placeholders
def _ns_case(host_ns: str | None, others_ns: str | None, split_files: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case(namespace=host_ns)
        # the host calls the scorer by its bare Service name: the two must share a namespace (the ConfigMap
        # refers to nothing and is not compared)
        case.main["env"] = [{"name": "SCORER_URL", "value": "http://scorer:8000/score"}]
        others = [configmap("eval-config", others_ns), service("scorer", {"run": "scorer"}, others_ns)]
        if split_files:
            case.other_files.append(others)
        else:
            case.companions += others
        return case
    return build


def _url_case(url: str, in_shell: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        if in_shell:
            case.main.update(shell(f"set -euo pipefail\nexec python -m client --endpoint {url}\n"))
        else:
            case.main["env"] = [{"name": "SCORER_URL", "value": url}]
        case.companions.append(service("scorer", {"run": "scorer"}))
        return case
    return build


def _url_in_configmap(url: str) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["envFrom"] = [{"configMapRef": {"name": "client-settings"}}]
        case.companions += [service("scorer", {"run": "scorer"}),
                            {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "client-settings", "namespace": NS},
                             "data": {"SCORER_URL": url, "LOG_LEVEL": "info"}}]
        return case
    return build


def _placeholder(where: str, fixed: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        value = "/models/qwen3-8b" if fixed else "${MODEL_PATH}"
        if where == "env":
            case.main["env"] = [{"name": "MODEL_PATH", "value": value}]
        elif where == "image":
            case.main["image"] = PINNED if fixed else "${REGISTRY}/rl/worker:build-417"
        elif where == "empty-image":
            case.main["image"] = PINNED if fixed else "/rl/worker:build-417"
        elif where == "empty-url":
            case.main["env"] = [{"name": "SCORER_URL",
                                 "value": f"http://scorer.{NS}.svc:8080" if fixed else "http://scorer..svc:8080"}]
        elif where == "namespace":
            case.namespace = NS if fixed else "${KUBE_NAMESPACE}"
        elif where == "helm":
            case.main["env"] = [{"name": "MODEL_PATH", "value": value if fixed else "{{ .Values.modelPath }}"}]
        elif where == "default":
            case.main["env"] = [{"name": "MODEL_PATH", "value": value if fixed else "${MODEL_PATH:-/models/base}"}]
        else:
            case.main["args"] = ["--model", value]
        return case
    return build


DEFECTS += [
    Defect("850-host-without-namespace", "GRPO850", _ns_case(None, NS, False), _ns_case(NS, NS, False),
           "@host:metadata"),
    Defect("850-mixed-across-files", "GRPO850", _ns_case(None, NS, True), _ns_case(None, None, True),
           "@host:metadata"),
    Defect("850-other-namespace", "GRPO850", _ns_case(OTHER_NS, NS, True), _ns_case(NS, NS, True),
           "@host:metadata.namespace"),
    Defect("101-url-env-other-namespace", "GRPO101", _url_case("http://scorer.default.svc.cluster.local:8080/run",
                                                               False),
           _url_case(f"http://scorer.{NS}.svc.cluster.local:8080/run", False), "containers.0.env.0.value"),
    Defect("101-url-shell-other-namespace", "GRPO101", _url_case(f"http://scorer.{OTHER_NS}.svc:8080", True),
           _url_case(f"http://scorer.{NS}.svc:8080", True), "containers.0.args.0"),
    Defect("851-placeholder-env", "GRPO851", _placeholder("env", False), _placeholder("env", True),
           "containers.0.env.0.value"),
    Defect("851-placeholder-image", "GRPO851", _placeholder("image", False), _placeholder("image", True),
           "containers.0.image"),
    Defect("851-placeholder-args", "GRPO851", _placeholder("args", False), _placeholder("args", True),
           "containers.0.args.1", only=NOT_RAY_CONTAINERS,
           skip_reason="KubeRay runs a Ray container's command and args through `bash -lc`: the shell expands $VAR"),
    Defect("851-unset-variable-in-image", "GRPO851", _placeholder("empty-image", False),
           _placeholder("empty-image", True), "containers.0.image"),
    Defect("851-unset-variable-in-url", "GRPO851", _placeholder("empty-url", False), _placeholder("empty-url", True),
           "containers.0.env.0.value"),
    Defect("851-placeholder-namespace", "GRPO851", _placeholder("namespace", False), _placeholder("namespace", True),
           "@host:metadata.namespace"),
    Defect("851-helm-template-left", "GRPO851", _placeholder("helm", False), _placeholder("helm", True),
           "containers.0.env.0.value"),
    Defect("851-placeholder-with-default", "GRPO851", _placeholder("default", False), _placeholder("default", True),
           "containers.0.env.0.value"),
    Defect("101-url-configmap-other-namespace", "GRPO101", _url_in_configmap(f"http://scorer.{OTHER_NS}:8080/run"),
           _url_in_configmap("http://scorer:8080/run"), "@ConfigMap:data.SCORER_URL",
           only=WRAPPERS, skip_reason="a ConfigMap holds no pod template; checked in the file-shape columns"),
    Defect("101-url-short-form-other-namespace", "GRPO101", _url_case(f"http://scorer.{OTHER_NS}:8080/run", False),
           _url_case(f"http://scorer.{NS}:8080/run", False), "containers.0.env.0.value"),
]


# --- secrets
def _secret_env(value: Any, name="HF_TOKEN") -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        entry: dict[str, Any] = {"name": name}
        if value is None:
            entry["valueFrom"] = {"secretKeyRef": {"name": "hub-credentials", "key": "token"}}
        else:
            entry["value"] = value
        case.main["env"] = [entry]
        return case
    return build


SECRET_SKIP = "a Secret holds no pod template; checked in the file-shape columns"


def _secret_object(value: str | None, field_name="stringData") -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["env"] = [{"name": "WANDB_API_KEY",
                             "valueFrom": {"secretKeyRef": {"name": "tracker", "key": "api_key"}}}]
        data = {} if value is None else {"api_key": value}
        case.companions.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                "metadata": {"name": "tracker", "namespace": NS}, field_name: data})
        return case
    return build


DEFECTS += [
    Defect("201-empty-secret-stringdata", "GRPO201", _secret_object(""), _secret_object(None),
           "@Secret:stringData.api_key", only=WRAPPERS, skip_reason=SECRET_SKIP),
    Defect("201-empty-secret-data", "GRPO201", _secret_object("", "data"), _secret_object(None, "data"),
           "@Secret:data.api_key", only=WRAPPERS, skip_reason=SECRET_SKIP),
    Defect("201-empty-aws-secret-env", "GRPO201", _secret_env("", "AWS_SECRET_ACCESS_KEY"),
           _secret_env(None, "AWS_SECRET_ACCESS_KEY"), "containers.0.env.0.value"),
    Defect("201-empty-token-env", "GRPO201", _secret_env(""), _secret_env(None), "containers.0.env.0.value"),
    Defect("201-empty-password-env", "GRPO201", _secret_env("", "MLFLOW_TRACKING_PASSWORD"),
           _secret_env(None, "MLFLOW_TRACKING_PASSWORD"), "containers.0.env.0.value"),
]


# --- shell in manifests
UTILITY_BAD = "set -eu\npip install --no-cache-dir datasets==4.4.1 > /tmp/pip.log 2>&1\nsleep infinity\n"
UTILITY_FIXED = ("set -eu\npip install --no-cache-dir datasets==4.4.1 > /tmp/pip.log 2>&1\ntouch /tmp/ready\n"
                 "sleep infinity\n")


def _utility(fixed: bool, idle="sleep infinity") -> Callable[[], Case]:
    def build() -> Case:
        case = with_script((UTILITY_FIXED if fixed else UTILITY_BAD).replace("sleep infinity", idle))
        if fixed:
            case.main["readinessProbe"] = {"exec": {"command": ["test", "-f", "/tmp/ready"]}}
        return case
    return build


WAIT_FOR = "http://scorer:8080/health"
WAIT_SEQ_BAD = (f"set -eu\nfor i in $(seq 1 60); do\n  if curl -sf {WAIT_FOR}; then break; fi\n  sleep 5\ndone\n"
                "exec python -m driver\n")
WAIT_SEQ_FIXED = (f"set -eu\nfor i in $(seq 1 60); do\n  if curl -sf {WAIT_FOR}; then break; fi\n"
                  "  if [ \"$i\" -eq 60 ]; then echo 'scorer never ready' >&2; exit 1; fi\n  sleep 5\ndone\n"
                  "exec python -m driver\n")
WAIT_UNTIL_BAD = f"until curl -sf {WAIT_FOR}; do echo waiting; sleep 10; done\nexec python -m driver\n"
WAIT_UNTIL_FIXED = (f"n=0\nuntil curl -sf {WAIT_FOR}; do\n  n=$((n+1))\n  [ $n -ge 90 ] && exit 1\n"
                    "  sleep 10\ndone\nexec python -m driver\n")
PIP_TAIL_BAD = "set -e\npip install --no-cache-dir torch==2.13.0 2>&1 | tail -1\nexec python -m driver\n"
PIP_TAIL_FIXED = "set -eo pipefail\npip install --no-cache-dir torch==2.13.0 2>&1 | tail -1\nexec python -m driver\n"
TEE_BAD = "python -m trainer --config /etc/run.yaml 2>&1 | tee /tmp/train.log\n"
TEE_FIXED = "set -o pipefail\npython -m trainer --config /etc/run.yaml 2>&1 | tee /tmp/train.log\n"
XTRACE_TOKEN_BAD = "set -xeuo pipefail\nhuggingface-cli login --token \"$HF_TOKEN\"\nexec python -m driver\n"
XTRACE_TOKEN_FIXED = ("set -euo pipefail\nhuggingface-cli login --token \"$HF_TOKEN\"\nset -x\n"
                      "exec python -m driver\n")
XTRACE_SOURCE_BAD = "set -x\nset -eu\n. /etc/run/env_vars\nexec python -m driver\n"
XTRACE_SOURCE_FIXED = "set -eu\n. /etc/run/env_vars\nset -x\nexec python -m driver\n"


def _scripted(script: str, sh="bash", secret=False) -> Callable[[], Case]:
    def build() -> Case:
        case = with_script(script, sh)
        if secret:
            case.main["env"] = [{"name": "HF_TOKEN",
                                 "valueFrom": {"secretKeyRef": {"name": "hub-credentials", "key": "token"}}}]
        return case
    return build


def _probe(command: list[str] | None) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["readinessProbe"] = ({"exec": {"command": command}} if command
                                       else {"httpGet": {"path": "/health", "port": 8080}})
        return case
    return build


def _all_in_command(script: str, fixed_probe: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["command"] = ["/bin/sh", "-ec", script]
        if fixed_probe:
            case.main["readinessProbe"] = {"exec": {"command": ["cat", "/tmp/ready"]}}
        return case
    return build


def _init_script(script: str) -> Callable[[], Case]:
    """The script runs in an init container that gates the main one."""
    def build() -> Case:
        case = Case()
        init = hardened_container("wait-for-scorer")
        init.update(shell(script, "sh"))
        case.pod["initContainers"] = [init]
        return case
    return build


WAIT_NC_BAD = "while ! nc -z scorer 8080; do sleep 2; done\nexec python -m driver\n"
WAIT_FILE_BAD = "while [ ! -f /shared/ready ]; do sleep 5; done\nexec python -m driver\n"
WAIT_FILE_FIXED = ("for _ in $(seq 1 120); do\n  [ -f /shared/ready ] && break\n  sleep 5\ndone\n"
                   "[ -f /shared/ready ] || { echo 'never ready' >&2; exit 1; }\nexec python -m driver\n")
WAIT_BRACE_BAD = ("for i in {1..30}; do\n  curl -sf http://scorer:8080/health && break || sleep 10\ndone\n"
                  "exec python -m driver\n")
WAIT_BRACE_FIXED = ("for i in {1..30}; do\n  curl -sf http://scorer:8080/health && break || sleep 10\ndone\n"
                    "curl -sf http://scorer:8080/health || exit 1\nexec python -m driver\n")
PIP_TAIL_SH_EC_BAD = "pip install --no-cache-dir torch==2.13.0 2>&1 | tail -n 3\nexec python -m driver\n"
XTRACE_LONG_BAD = ("set -o errexit -o xtrace\ncurl -sf -H \"Authorization: Bearer ${API_TOKEN}\" "
                   "https://hub.example.com/v1/models\n")
XTRACE_LONG_FIXED = ("set -o errexit\ncurl -sf -H \"Authorization: Bearer ${API_TOKEN}\" "
                     "https://hub.example.com/v1/models\n")


def _invoked(script: str, argv0: list[str], secret: str | None = None, env_from=False) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["command"] = [*argv0, script]
        if secret and env_from:
            case.main["envFrom"] = [{"secretRef": {"name": "hub-credentials"}}]
            case.companions.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                    "metadata": {"name": "hub-credentials", "namespace": NS}, "data": {secret: ""}})
        elif secret:
            case.main["env"] = [{"name": secret,
                                 "valueFrom": {"secretKeyRef": {"name": "hub-credentials", "key": "token"}}}]
        return case
    return build


XTRACE_AUTH_BAD = "set -eux\ncurl -sf -H \"Authorization: Bearer $HUB_AUTH\" https://hub.example.com/v1/models\n"
XTRACE_AUTH_FIXED = "set -eu\ncurl -sf -H \"Authorization: Bearer $HUB_AUTH\" https://hub.example.com/v1/models\n"
RAYJOBS = ("rayjob-head", "rayjob-worker", "rayjob-submitter")
# Embeddings whose pods exist for finite work (a Job's, a RayJob's cluster, a training job's replicas).
FINITE = ("job", "cronjob", *RAYJOBS, "jobset", "pytorchjob-worker", "volcano-task", "list-of-dumps",
          "multi-document")


def _entrypoint(script: str) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.entrypoint = script
        return case
    return build


SCRIPT = "containers.0.args.0"
DEFECTS += [
    Defect("849-utility-sleep-infinity", "GRPO849", _utility(False), _utility(True), SCRIPT),
    Defect("849-utility-tail-dev-null", "GRPO849", _utility(False, "tail -f /dev/null"),
           _utility(True, "tail -f /dev/null"), SCRIPT),
    Defect("849-utility-sleep-a-year", "GRPO849", _utility(False, "sleep 365d"), _utility(True, "sleep 365d"),
           SCRIPT),
    Defect("849-utility-while-true", "GRPO849", _utility(False, "while :; do sleep 3600; done"),
           _utility(True, "while :; do sleep 3600; done"), SCRIPT),
    Defect("849-utility-all-in-command", "GRPO849",
           _all_in_command("pip install --no-cache-dir datasets==4.4.1\nexec sleep infinity\n", False),
           _all_in_command("pip install --no-cache-dir datasets==4.4.1\ntouch /tmp/ready\nexec sleep infinity\n",
                           True), "containers.0.command.2"),
    Defect("841-wait-nc-forever", "GRPO841", _scripted(WAIT_NC_BAD, "sh"), _scripted(WAIT_UNTIL_FIXED, "sh"),
           SCRIPT),
    Defect("841-wait-file-forever", "GRPO841", _scripted(WAIT_FILE_BAD), _scripted(WAIT_FILE_FIXED), SCRIPT),
    Defect("841-wait-brace-range", "GRPO841", _scripted(WAIT_BRACE_BAD), _scripted(WAIT_BRACE_FIXED), SCRIPT),
    Defect("841-wait-in-init-container", "GRPO841", _init_script(WAIT_UNTIL_BAD), _init_script(WAIT_UNTIL_FIXED),
           "initContainers.0.args.0", only=FINITE,
           skip_reason="an init container of a pod that runs until stopped is a gate: waiting is what it is for"),
    Defect("842-pip-tail-sh-ec", "GRPO842", _invoked(PIP_TAIL_SH_EC_BAD, ["sh", "-ec"]),
           _invoked(PIP_TAIL_SH_EC_BAD, ["bash", "-o", "pipefail", "-ec"]), "containers.0.command.2"),
    Defect("843-xtrace-invocation", "GRPO843", _invoked(XTRACE_TOKEN_FIXED, ["bash", "-xc"], "HF_TOKEN"),
           _invoked(XTRACE_TOKEN_FIXED, ["bash", "-c"], "HF_TOKEN"), "containers.0.command.2"),
    Defect("843-xtrace-long-option", "GRPO843", _invoked(XTRACE_LONG_BAD, ["bash", "-c"], "API_TOKEN"),
           _invoked(XTRACE_LONG_FIXED, ["bash", "-c"], "API_TOKEN"), "containers.0.command.2"),
    Defect("842-pip-tail-behind-env-launcher", "GRPO842", _invoked(PIP_TAIL_BAD, ["/usr/bin/env", "bash", "-c"]),
           _invoked(PIP_TAIL_FIXED, ["/usr/bin/env", "bash", "-c"]), "containers.0.command.3"),
    Defect("842-tee-behind-tini", "GRPO842", _invoked(TEE_BAD, ["tini", "--", "bash", "--noprofile", "-c"]),
           _invoked(TEE_FIXED, ["tini", "--", "bash", "--noprofile", "-c"]), "containers.0.command.5"),
    Defect("842-tee-in-rayjob-entrypoint", "GRPO842", _entrypoint("python -m train 2>&1 | tee /tmp/train.log"),
           _entrypoint("python -m train > /tmp/train.log 2>&1"), "@host:spec.entrypoint", only=RAYJOBS,
           skip_reason="only a RayJob has an entrypoint command line"),
    Defect("841-wait-in-rayjob-entrypoint", "GRPO841",
           _entrypoint("until curl -sf http://scorer:8080/health; do sleep 5; done; python -m train"),
           _entrypoint("timeout 600 sh -c 'until curl -sf http://scorer:8080/health; do sleep 5; done' && "
                       "python -m train"), "@host:spec.entrypoint", only=RAYJOBS,
           skip_reason="only a RayJob has an entrypoint command line"),
    Defect("843-xtrace-secret-ref-any-name", "GRPO843", _invoked(XTRACE_AUTH_BAD, ["bash", "-c"], "HUB_AUTH"),
           _invoked(XTRACE_AUTH_FIXED, ["bash", "-c"], "HUB_AUTH"), "containers.0.command.2"),
    Defect("843-xtrace-envfrom-secret", "GRPO843", _invoked(XTRACE_AUTH_BAD, ["bash", "-c"], "HUB_AUTH", True),
           _invoked(XTRACE_AUTH_FIXED, ["bash", "-c"], "HUB_AUTH", True), "containers.0.command.2"),
    Defect("870-unpinned-pip-install", "GRPO870",
           _scripted("set -euo pipefail\npip install --no-cache-dir torch lm_eval[api]\nexec python -m driver\n"),
           _scripted("set -euo pipefail\npip install --no-cache-dir torch==2.13.0 lm_eval[api]==0.4.9\n"
                     "exec python -m driver\n"), SCRIPT),
    Defect("870-pip-range", "GRPO870", _invoked("python3 -m pip install 'peft>=0.11' && exec python -m merge",
                                                 ["sh", "-c"]),
           _invoked("python3 -m pip install 'peft==0.13.2' && exec python -m merge", ["sh", "-c"]),
           "containers.0.command.2"),
    Defect("871-hub-download-without-revision", "GRPO871",
           _scripted("set -eu\nhuggingface-cli download Qwen/Qwen3-8B --local-dir /data/models/qwen3-8b\n"),
           _scripted("set -eu\nhuggingface-cli download Qwen/Qwen3-8B --revision 9c925d64d72725edaf899c6cb9c377fd"
                     "0709d9c5 --local-dir /data/models/qwen3-8b\n"), SCRIPT),
    Defect("871-hub-download-branch", "GRPO871",
           _invoked("hf download open-r1/codeforces --repo-type dataset --revision=main --local-dir /data/cf",
                    ["sh", "-c"]),
           _invoked("hf download open-r1/codeforces --repo-type dataset --revision=v1.1 --local-dir /data/cf",
                    ["sh", "-c"]), "containers.0.command.2"),
    Defect("841-wait-seq-falls-through", "GRPO841", _scripted(WAIT_SEQ_BAD), _scripted(WAIT_SEQ_FIXED), SCRIPT),
    Defect("841-wait-until-forever", "GRPO841", _scripted(WAIT_UNTIL_BAD, "sh"), _scripted(WAIT_UNTIL_FIXED, "sh"),
           SCRIPT),
    Defect("842-pip-tail-set-e", "GRPO842", _scripted(PIP_TAIL_BAD), _scripted(PIP_TAIL_FIXED), SCRIPT),
    Defect("842-tee-last-command", "GRPO842", _scripted(TEE_BAD), _scripted(TEE_FIXED), SCRIPT),
    Defect("843-xtrace-token", "GRPO843", _scripted(XTRACE_TOKEN_BAD, secret=True),
           _scripted(XTRACE_TOKEN_FIXED, secret=True), SCRIPT),
    Defect("843-xtrace-source", "GRPO843", _scripted(XTRACE_SOURCE_BAD), _scripted(XTRACE_SOURCE_FIXED), SCRIPT),
    Defect("844-probe-true", "GRPO844", _probe(["true"]), _probe(["test", "-f", "/tmp/ready"]),
           "containers.0.readinessProbe.exec.command"),
    Defect("844-probe-sh-echo", "GRPO844", _probe(["sh", "-c", "echo ok"]), _probe(None),
           "containers.0.readinessProbe.exec.command"),
    Defect("844-probe-bin-true", "GRPO844", _probe(["/bin/true"]), _probe(["test", "-S", "/run/app.sock"]),
           "containers.0.readinessProbe.exec.command"),
    Defect("844-probe-check-or-true", "GRPO844", _probe(["sh", "-c", "curl -s http://127.0.0.1:8080/health || true"]),
           _probe(["sh", "-c", "curl -sf http://127.0.0.1:8080/health"]), "containers.0.readinessProbe.exec.command"),
    Defect("844-probe-check-or-exit-0", "GRPO844",
           _probe(["bash", "-c", "python -c 'import datasets' || exit 0"]),
           _probe(["bash", "-c", "python -c 'import datasets'"]), "containers.0.readinessProbe.exec.command"),
    Defect("844-probe-exit-0", "GRPO844", _probe(["/bin/sh", "-c", "exit 0"]),
           _probe(["sh", "-c", "curl -sf http://127.0.0.1:8080/health"]), "containers.0.readinessProbe.exec.command"),
]


def _slow_start(deadline: int | None) -> Callable[[], Case]:
    """A server that may take 90 minutes to load its weights, in a Deployment with or without a deadline."""
    def build() -> Case:
        case = Case()
        case.main["startupProbe"] = {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 30,
                                     "failureThreshold": 180}
        if deadline:
            case.workload["progressDeadlineSeconds"] = deadline
        return case
    return build


DEFECTS += [
    Defect("501-deadline-shorter-than-startup", "GRPO501", _slow_start(None), _slow_start(6000), "@host:spec",
           only=("deployment", "envsubst-output"), skip_reason="only a Deployment has a progress deadline"),
]


# --- images
def _image(image: str) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        case.main["image"] = image
        return case
    return build


IMAGE = "containers.0.image"
DEFECTS += [
    Defect("701-latest", "GRPO701", _image("ghcr.io/acme/sandbox:latest"), _image("ghcr.io/acme/sandbox:build-417"),
           IMAGE),
    Defect("701-main", "GRPO701", _image("ghcr.io/acme/trainer:main"), _image("ghcr.io/acme/trainer:main-3f9c2ab"),
           IMAGE),
    Defect("701-bare-major", "GRPO701", _image("python:3"), _image("python:3.11.15-slim"), IMAGE),
    Defect("701-major-minor-variant", "GRPO701", _image("python:3.11-slim"), _image("python:3.11.15-slim"), IMAGE),
    Defect("701-nightly", "GRPO701", _image("vllm/vllm-openai:nightly"),
           _image("vllm/vllm-openai@sha256:" + "ab" * 32), IMAGE),
    # A bare version on a project's image is its release tag (the rule's DOC); Docker's official images move theirs.
    Defect("701-official-major-minor", "GRPO701", _image("redis:7.4"), _image("redis:7.4.5"), IMAGE),
    Defect("701-latest-variant", "GRPO701", _image("rayproject/ray:latest-gpu"),
           _image("rayproject/ray:2.53.0-py311-gpu"), IMAGE),
    Defect("701-no-tag", "GRPO701", _image("acme/eval-driver"), _image("acme/eval-driver:server-20250609"), IMAGE),
]


# --- resources and devices
def _gpu(requests_only: bool, memory: tuple[str, ...]) -> Callable[[], Case]:
    """A one-GPU container; `memory` names where it states its memory ("requests", "limits", both or neither)."""
    def build() -> Case:
        case = Case()
        res: dict[str, dict] = {"requests": {"cpu": "8", "nvidia.com/gpu": 1}, "limits": {}}
        if not requests_only:
            res["limits"]["nvidia.com/gpu"] = 1
        for where in memory:
            res[where]["memory"] = "64Gi"
        case.main["resources"] = res
        return case
    return build


def _gpu_quantity(request: str, limit: str | None) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        res: dict[str, Any] = {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": request},
                               "limits": {"memory": "64Gi"}}
        if limit is not None:
            res["limits"]["nvidia.com/gpu"] = limit
        case.main["resources"] = res
        return case
    return build


def _mig(memory_stated: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        slices = {"nvidia.com/mig-1g.10gb": 1}
        memory = {"memory": "8Gi"} if memory_stated else {}
        case.main["resources"] = {"requests": {"cpu": "2", **memory, **slices}, "limits": {**slices, **memory}}
        return case
    return build


def _efa(limited: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        req = {"cpu": "8", "memory": "64Gi", "vpc.amazonaws.com/efa": 1}
        case.main["resources"] = {"requests": req,
                                  "limits": {"memory": "64Gi", **({"vpc.amazonaws.com/efa": 1} if limited else {})}}
        return case
    return build


# The job that makes a driverless head's CPUs matter: miles' trainer, submitted from a Job beside the cluster.
MILES_SUBMIT = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "submit", "namespace": NS},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
                    "name": "submit", "image": PINNED, "command": ["ray", "job", "submit", "--"],
                    "args": ["python3", "train_async.py", "--hf-checkpoint", "/data/models/policy",
                             "--actor-num-gpus-per-node", "8"]}]}}}}


def _head(params: dict[str, str], gpu=False) -> Callable[[], Case]:
    def build() -> Case:
        case = Case(head_params=dict(params), gpu_workers=True)  # the class: a driverless head in a GPU cluster
        case.companions.append(copy.deepcopy(MILES_SUBMIT))  # running miles' trainer
        if gpu:
            case.main["resources"] = {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1},
                                      "limits": {"memory": "64Gi", "nvidia.com/gpu": 1}}
        return case
    return build


def _capacity(instance: str | list[str], requests: dict[str, Any], limits: dict[str, Any],
              label="node.kubernetes.io/instance-type") -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        if isinstance(instance, list):
            case.pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": label, "operator": "In", "values": instance}]}]}}}
        else:
            case.pod["nodeSelector"] = {label: instance, "pool": "gpu"}
        case.main["resources"] = {"requests": dict(requests), "limits": dict(limits)}
        return case
    return build


P5_FULL = {"cpu": "150", "memory": "1500Gi", "nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
P5_PARTIAL = {**P5_FULL, "vpc.amazonaws.com/efa": 16}
RAY_HEADS = ("raycluster-head", "rayjob-head", "rayservice-head")
DEFECTS += [
    Defect("846-gpu-request-without-limit", "GRPO846", _gpu(True, ("requests", "limits")),
           _gpu(False, ("requests", "limits")), "containers.0.resources.requests"),
    # A memory request alone is the good twin: a deliberate Burstable pod, not a defect. Batch pods are judged
    # as servers are (the rule's DOC).
    Defect("846-gpu-stating-no-memory", "GRPO846", _gpu(False, ()), _gpu(False, ("requests",)),
           "containers.0.resources"),
    Defect("845-driverless-head-cpus", "GRPO845", _head({"dashboard-host": "127.0.0.1"}), _head({"num-cpus": "0"}),
           "@group:rayStartParams", only=RAY_HEADS, skip_reason="only a Ray head group has rayStartParams of a head"),
    Defect("845-driverless-head-gpus", "GRPO845", _head({"num-cpus": "0", "num-gpus": "8"}),
           _head({"num-cpus": "4", "num-gpus": "1"}, gpu=True), "@group:rayStartParams",
           only=RAY_HEADS, skip_reason="only a Ray head group has rayStartParams of a head"),
    Defect("845-driverless-head-no-start-params", "GRPO845", _head({"omit": "rayStartParams"}),
           _head({"num-cpus": "0"}), "@group:", only=RAY_HEADS,
           skip_reason="only a Ray head group has rayStartParams of a head"),
    Defect("846-gpu-string-quantity-without-limit", "GRPO846", _gpu_quantity("4", None), _gpu_quantity("4", "4"),
           "containers.0.resources.requests"),
    Defect("846-mig-slice-stating-no-memory", "GRPO846", _mig(False), _mig(True), "containers.0.resources"),
    Defect("846-efa-request-without-limit", "GRPO846", _efa(False), _efa(True), "containers.0.resources.requests"),
    Defect("601-oversized-affinity-branch", "GRPO601",
           _capacity(["m5.xlarge", "m5.4xlarge"], {"cpu": "8", "memory": "16Gi"}, {"memory": "16Gi"}),
           _capacity(["m5.2xlarge", "m5.4xlarge"], {"cpu": "6", "memory": "16Gi"}, {"memory": "16Gi"}),
           "affinity.nodeAffinity"),
    Defect("601-partial-efa-beta-label", "GRPO601",
           _capacity("p5.48xlarge", P5_PARTIAL, P5_PARTIAL, "beta.kubernetes.io/instance-type"),
           _capacity("p5.48xlarge", P5_FULL, P5_FULL, "beta.kubernetes.io/instance-type"), "nodeSelector"),
    Defect("601-partial-efa", "GRPO601", _capacity("p5.48xlarge", P5_PARTIAL, P5_PARTIAL),
           _capacity("p5.48xlarge", P5_FULL, P5_FULL), "nodeSelector"),
    Defect("601-oversized-cpu", "GRPO601", _capacity("m5.xlarge", {"cpu": "8", "memory": "16Gi"}, {"memory": "16Gi"}),
           _capacity("m5.4xlarge", {"cpu": "8", "memory": "16Gi"}, {"memory": "16Gi"}), "nodeSelector"),
]


# --- pod security
def _pod_security(mutate: Callable[[Case], None]) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        mutate(case)
        return case
    return build


def _pod_seccomp_unconfined(case: Case) -> None:
    case.pod["securityContext"]["seccompProfile"] = {"type": "Unconfined"}


def _container_seccomp_unconfined(case: Case) -> None:
    case.main["securityContext"]["seccompProfile"] = {"type": "Unconfined"}


def _apparmor_unconfined(case: Case) -> None:
    case.main["securityContext"]["appArmorProfile"] = {"type": "Unconfined"}


def _apparmor_annotation_unconfined(case: Case) -> None:
    case.annotations["container.apparmor.security.beta.kubernetes.io/main"] = "unconfined"


def _apparmor_runtime_default(case: Case) -> None:
    case.main["securityContext"]["appArmorProfile"] = {"type": "RuntimeDefault"}


def _host_path(read_only: bool, by_sub=False) -> Callable[[Case], None]:
    def mutate(case: Case) -> None:
        case.pod["volumes"] = [{"name": "host-cache", "hostPath": {"path": "/var/cache/models",
                                                                    "type": "DirectoryOrCreate"}}]
        m = {"name": "host-cache", "mountPath": "/cache", **({"subPath": "hf"} if by_sub else {})}
        if read_only:
            m["readOnly"] = True
        case.main["volumeMounts"] = [m]
    return mutate


def _init_host_path(read_only: bool) -> Callable[[Case], None]:
    def mutate(case: Case) -> None:
        _host_path(read_only)(case)
        init = hardened_container("warm-cache")
        init["volumeMounts"] = case.main.pop("volumeMounts")
        case.pod["initContainers"] = [init]
    return mutate


DEFECTS += [
    Defect("847-writable-hostpath-init-container", "GRPO847", _pod_security(_init_host_path(False)),
           _pod_security(_init_host_path(True)), "initContainers.0.volumeMounts.0"),
    Defect("810-pod-apparmor-unconfined", "GRPO810",
           _pod_security(lambda c: c.pod["securityContext"].update(appArmorProfile={"type": "Unconfined"})),
           _pod_security(lambda c: c.pod["securityContext"].update(appArmorProfile={"type": "RuntimeDefault"})),
           "securityContext.appArmorProfile"),
    Defect("810-pod-seccomp-unconfined", "GRPO810", _pod_security(_pod_seccomp_unconfined),
           _pod_security(lambda c: None), "securityContext.seccompProfile"),
    Defect("810-container-seccomp-unconfined", "GRPO810", _pod_security(_container_seccomp_unconfined),
           _pod_security(lambda c: None), "containers.0.securityContext"),
    Defect("810-apparmor-unconfined", "GRPO810", _pod_security(_apparmor_unconfined),
           _pod_security(_apparmor_runtime_default), "containers.0.securityContext"),
    Defect("810-apparmor-annotation-unconfined", "GRPO810", _pod_security(_apparmor_annotation_unconfined),
           _pod_security(lambda c: None), "@template:metadata.annotations"),
    Defect("847-writable-hostpath", "GRPO847", _pod_security(_host_path(False)), _pod_security(_host_path(True)),
           "containers.0.volumeMounts.0"),
    Defect("847-writable-hostpath-subpath", "GRPO847", _pod_security(_host_path(False, True)),
           _pod_security(_host_path(True, True)), "containers.0.volumeMounts.0"),
]


# --- selectors
def _selector_case(service_selects_pod: bool, affinity: bool) -> Callable[[], Case]:
    def build() -> Case:
        case = Case(labels=dict(LABEL_SCHEMES[1]))
        selector = dict(case.labels) if service_selects_pod else {"app.kubernetes.io/name": "scorrer"}
        if affinity:
            case.pod["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                    "labelSelector": {"matchLabels": selector}}}]}}
        else:
            case.companions.append(service("scorer", selector))
        return case
    return build


def _policy_selecting(selector: dict[str, Any]) -> Callable[[], Case]:
    def build() -> Case:
        case = Case(labels=dict(LABEL_SCHEMES[3]))
        policy = netpol({})
        policy["spec"]["podSelector"] = selector
        case.companions.append(policy)
        return case
    return build


def _expression_anti_affinity(values: list[str]) -> Callable[[], Case]:
    def build() -> Case:
        case = Case(labels=dict(LABEL_SCHEMES[3]))
        case.pod["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchExpressions": [
                {"key": "k8s-app", "operator": "In", "values": values}]}}]}}
        return case
    return build


def _away_from_ray_head(selector: dict[str, str]) -> Callable[[], Case]:
    """The pod keeps off the node of a Ray head the set creates (the predecessor's sandbox anti-affinity)."""
    def build() -> Case:
        case = Case(labels=dict(LABEL_SCHEMES[0]))
        head = neutral(case, {"role": "trainer-head"})
        case.companions.append({"apiVersion": "ray.io/v1", "kind": "RayCluster",
                                "metadata": {"name": "trainer", "namespace": NS},
                                "spec": {"headGroupSpec": {"rayStartParams": {"num-cpus": "0"},
                                                           "template": template(head)}}})
        case.pod["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                "labelSelector": {"matchLabels": dict(selector)}}}]}}
        return case
    return build


def _rbac(subject: dict[str, str], cluster=False) -> Callable[[], Case]:
    def build() -> Case:
        case = Case()
        kind = "ClusterRoleBinding" if cluster else "RoleBinding"
        meta = {"name": "executor-reader", **({} if cluster else {"namespace": NS})}
        case.companions.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [subject]})
        return case
    return build


POD_EMBEDDINGS_ONLY_ONCE = ("an RBAC binding holds no pod template; checked in the file-shape columns (dump, List, "
                            "envsubst, multi-document) and beside a Deployment")
DEFECTS += [
    Defect("401-service-selects-nothing", "GRPO401", _selector_case(False, False), _selector_case(True, False),
           "@Service:spec.selector"),
    Defect("401-anti-affinity-selects-nothing", "GRPO401", _selector_case(False, True), _selector_case(True, True),
           "affinity.podAntiAffinity"),
    Defect("401-legacy-ray-label", "GRPO401", _away_from_ray_head({"ray-node-type": "head"}),
           _away_from_ray_head({"ray.io/node-type": "head", "ray.io/cluster": "trainer"}), "affinity.podAntiAffinity"),
    Defect("401-networkpolicy-selects-nothing", "GRPO401", _policy_selecting({"matchLabels": {"k8s-app": "util"}}),
           _policy_selecting({"matchLabels": {"k8s-app": "utils"}}), "@NetworkPolicy:spec.podSelector"),
    Defect("401-anti-affinity-expression-selects-nothing", "GRPO401", _expression_anti_affinity(["utility"]),
           _expression_anti_affinity(["utils", "utility"]), "affinity.podAntiAffinity"),
    Defect("848-rolebinding-default-sa-implicit-namespace", "GRPO848",
           _rbac({"kind": "ServiceAccount", "name": "default"}),
           _rbac({"kind": "ServiceAccount", "name": "eval-reader"}),
           "@RoleBinding:subjects.0", only=WRAPPERS, skip_reason=POD_EMBEDDINGS_ONLY_ONCE),
    Defect("848-user-form-default-sa", "GRPO848",
           _rbac({"kind": "User", "name": f"system:serviceaccount:{NS}:default",
                  "apiGroup": "rbac.authorization.k8s.io"}),
           _rbac({"kind": "User", "name": f"system:serviceaccount:{NS}:eval-reader",
                  "apiGroup": "rbac.authorization.k8s.io"}), "@RoleBinding:subjects.0",
           only=WRAPPERS, skip_reason=POD_EMBEDDINGS_ONLY_ONCE),
    Defect("848-rolebinding-default-sa", "GRPO848", _rbac({"kind": "ServiceAccount", "name": "default",
                                                          "namespace": NS}),
           _rbac({"kind": "ServiceAccount", "name": "eval-reader", "namespace": NS}), "@RoleBinding:subjects.0",
           only=WRAPPERS, skip_reason=POD_EMBEDDINGS_ONLY_ONCE),
    Defect("848-clusterrolebinding-default-sa", "GRPO848",
           _rbac({"kind": "ServiceAccount", "name": "default", "namespace": NS}, cluster=True),
           _rbac({"kind": "ServiceAccount", "name": "eval-reader", "namespace": NS}, cluster=True),
           "@ClusterRoleBinding:subjects.0", only=WRAPPERS, skip_reason=POD_EMBEDDINGS_ONLY_ONCE),
    Defect("848-group-all-service-accounts", "GRPO848",
           _rbac({"kind": "Group", "name": f"system:serviceaccounts:{NS}", "apiGroup": "rbac.authorization.k8s.io"}),
           _rbac({"kind": "Group", "name": "rl-admins", "apiGroup": "rbac.authorization.k8s.io"}),
           "@RoleBinding:subjects.0", only=WRAPPERS, skip_reason=POD_EMBEDDINGS_ONLY_ONCE),
]


# ------------------------------------------------------------------------------------------------ embeddings
def meta(name: str, case: Case, labels: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if case.namespace:
        out["namespace"] = case.namespace
    if labels:
        out["labels"] = dict(labels)
    return out


def template(case: Case, pod: dict[str, Any] | None = None, restart: str | None = None) -> dict[str, Any]:
    spec = copy.deepcopy(pod if pod is not None else case.pod)
    if restart:
        spec["restartPolicy"] = restart
    tmeta: dict[str, Any] = {"labels": dict(case.labels)}
    if case.annotations and pod is None:
        tmeta["annotations"] = dict(case.annotations)
    return {"metadata": tmeta, "spec": spec}


def neutral(case: Case, labels: dict[str, str]) -> Case:
    """A neighbour pod (another Ray group, the JobSet's other job) that carries none of the defect."""
    return Case(labels=labels, namespace=case.namespace)


def ray_neighbour(case: Case, labels: dict[str, str]) -> Case:
    """The other group of a Ray cluster runs the same image (a Ray cluster is one image); a code-sandbox image is
    the defective group's own, never the whole cluster's."""
    other = neutral(case, labels)
    if "sandbox-fusion" not in case.main["image"]:
        other.main["image"] = case.main["image"]
    return other


@dataclass(frozen=True)
class Embedded:
    doc: dict[str, Any]  # the object holding the defective pod
    pod_path: str  # dotted path of its pod spec
    group_path: str = ""  # Ray group holding it, where there is one


def e_pod(case: Case) -> Embedded:
    m = meta("executor-0", case, case.labels)
    if case.annotations:
        m["annotations"] = dict(case.annotations)
    return Embedded({"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": copy.deepcopy(case.pod)}, "spec")


def e_deployment(case: Case) -> Embedded:
    return Embedded({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("executor", case),
                     "spec": {"replicas": 2, "selector": {"matchLabels": dict(case.labels)}, **case.workload,
                              "template": template(case)}}, "spec.template.spec")


def e_statefulset(case: Case) -> Embedded:
    return Embedded({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("executor", case),
                     "spec": {"serviceName": "executor", "replicas": 2,
                              "selector": {"matchLabels": dict(case.labels)}, "template": template(case)}},
                    "spec.template.spec")


def e_job(case: Case) -> Embedded:
    return Embedded({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("eval-run", case),
                     "spec": {"backoffLimit": 0, "template": template(case, restart="Never")}}, "spec.template.spec")


def e_cronjob(case: Case) -> Embedded:
    return Embedded({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("nightly-eval", case),
                     "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {
                         "template": template(case, restart="OnFailure")}}}},
                    "spec.jobTemplate.spec.template.spec")


def _ray_cluster_spec(case: Case, defective: str) -> dict[str, Any]:
    """A Ray cluster spec whose `defective` group ("head" or "worker") holds the case's pod."""
    head_case = case if defective == "head" else ray_neighbour(case, {"role": "ray-head"})
    worker_case = case if defective == "worker" else ray_neighbour(case, {"role": "ray-worker"})
    params = case.head_params if defective == "head" and case.head_params is not None else {"num-cpus": "0"}
    head: dict[str, Any] = {"rayStartParams": dict(params), "template": template(head_case)}
    if params.get("omit") == "rayStartParams":  # optional since KubeRay 1.2
        del head["rayStartParams"]
    worker = template(worker_case)
    if case.gpu_workers and defective != "worker":
        worker["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 8},
                                                        "limits": {"memory": "64Gi", "nvidia.com/gpu": 8}}
    return {"headGroupSpec": head,
            "workerGroupSpecs": [{"groupName": "rollout", "replicas": 2, "minReplicas": 2, "maxReplicas": 2,
                                  "rayStartParams": {}, "template": worker}]}


def _ray_paths(prefix: str, defective: str) -> tuple[str, str]:
    group = f"{prefix}.headGroupSpec" if defective == "head" else f"{prefix}.workerGroupSpecs.0"
    return f"{group}.template.spec", group


def e_raycluster(defective: str) -> Callable[[Case], Embedded]:
    def build(case: Case) -> Embedded:
        pod_path, group = _ray_paths("spec", defective)
        return Embedded({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": meta("rl-cluster", case),
                         "spec": _ray_cluster_spec(case, defective)}, pod_path, group)
    return build


def e_rayjob(defective: str) -> Callable[[Case], Embedded]:
    def build(case: Case) -> Embedded:
        spec: dict[str, Any] = {"entrypoint": case.entrypoint, "shutdownAfterJobFinishes": True,
                                "rayClusterSpec": _ray_cluster_spec(case, defective)}
        if defective == "submitter":
            spec["rayClusterSpec"] = _ray_cluster_spec(neutral(case, {"role": "x"}), "none")
            spec["submitterPodTemplate"] = template(case, restart="Never")
            return Embedded({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta("grpo-run", case),
                             "spec": spec}, "spec.submitterPodTemplate.spec")
        pod_path, group = _ray_paths("spec.rayClusterSpec", defective)
        return Embedded({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta("grpo-run", case),
                         "spec": spec}, pod_path, group)
    return build


def e_rayservice(defective: str) -> Callable[[Case], Embedded]:
    def build(case: Case) -> Embedded:
        pod_path, group = _ray_paths("spec.rayClusterConfig", defective)
        return Embedded({"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": meta("policy-serve", case),
                         "spec": {"serveConfigV2": "applications: []\n",
                                  "rayClusterConfig": _ray_cluster_spec(case, defective)}}, pod_path, group)
    return build


def e_jobset(case: Case) -> Embedded:
    other = neutral(case, {"role": "coordinator"})
    return Embedded({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta("rl-jobset", case),
                     "spec": {"replicatedJobs": [
                         {"name": "coordinator", "replicas": 1,
                          "template": {"spec": {"template": template(other, restart="Never")}}},
                         {"name": "workers", "replicas": 2,
                          "template": {"spec": {"parallelism": 1, "completions": 1,
                                                "template": template(case, restart="Never")}}}]}},
                    "spec.replicatedJobs.1.template.spec.template.spec")


def e_lws(defective: str) -> Callable[[Case], Embedded]:
    def build(case: Case) -> Embedded:
        other = neutral(case, {"role": "lws-other"})
        leader, worker = (case, other) if defective == "leader" else (other, case)
        doc = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
               "metadata": meta("vllm-multinode", case),
               "spec": {"replicas": 1, "leaderWorkerTemplate": {
                   "size": 2, "leaderTemplate": template(leader), "workerTemplate": template(worker)}}}
        path = "leaderTemplate" if defective == "leader" else "workerTemplate"
        return Embedded(doc, f"spec.leaderWorkerTemplate.{path}.spec")
    return build


def e_custom(case: Case) -> Embedded:
    """A project's own CRD: the pod template is found by its shape, at whatever path the CRD chose."""
    return Embedded({"apiVersion": "sandbox.acme.dev/v1beta1", "kind": "SandboxPool",
                     "metadata": meta("code-pool", case),
                     "spec": {"poolSize": 4, "runner": {"podTemplate": template(case)}}},
                    "spec.runner.podTemplate.spec")


def e_pytorchjob(case: Case) -> Embedded:
    """Kubeflow training-operator: replica specs keyed by role, each with a pod template."""
    master = neutral(case, {"role": "master"})
    return Embedded({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta("sft-run", case),
                     "spec": {"pytorchReplicaSpecs": {
                         "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template(master)},
                         "Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": template(case)}}}},
                    "spec.pytorchReplicaSpecs.Worker.template.spec")


def e_volcano(case: Case) -> Embedded:
    """A Volcano Job: tasks in a list, each with a pod template."""
    return Embedded({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta("gang-eval", case),
                     "spec": {"schedulerName": "volcano", "minAvailable": 2, "tasks": [
                         {"name": "driver", "replicas": 1, "template": template(neutral(case, {"role": "driver"}),
                                                                                restart="Never")},
                         {"name": "runner", "replicas": 2, "template": template(case, restart="Never")}]}},
                    "spec.tasks.1.template.spec")


def as_dump(doc: dict[str, Any]) -> dict[str, Any]:
    """What `kubectl get -o yaml` prints: server-set metadata, managedFields and status."""
    out = copy.deepcopy(doc)
    m = out["metadata"]
    m.update({"uid": "5d0c4a8e-6f3b-4f0e-9d55-7a1c2e9b8f10", "resourceVersion": "918273",
              "creationTimestamp": "2026-08-18T09:12:44Z", "generation": 3,
              "annotations": {**m.get("annotations", {}),
                              "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\"}\n"},
              "managedFields": [{"apiVersion": doc["apiVersion"], "fieldsType": "FieldsV1", "manager": "kubectl",
                                 "operation": "Update", "time": "2026-08-18T09:12:44Z",
                                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]})
    out["status"] = {"observedGeneration": 3, "conditions": [{"type": "Available", "status": "True"}]}
    return out


@dataclass(frozen=True)
class Embedding:
    id: str
    build: Callable[[Case], Embedded]
    wrap: str = ""  # "", "dump", "list", "envsubst", "multidoc"


EMBEDDINGS = [
    Embedding("pod", e_pod),
    Embedding("deployment", e_deployment),
    Embedding("statefulset", e_statefulset),
    Embedding("job", e_job),
    Embedding("cronjob", e_cronjob),
    Embedding("raycluster-head", e_raycluster("head")),
    Embedding("raycluster-worker", e_raycluster("worker")),
    Embedding("rayjob-head", e_rayjob("head")),
    Embedding("rayjob-worker", e_rayjob("worker")),
    Embedding("rayjob-submitter", e_rayjob("submitter")),
    Embedding("rayservice-head", e_rayservice("head")),
    Embedding("rayservice-worker", e_rayservice("worker")),
    Embedding("jobset", e_jobset),
    Embedding("lws-leader", e_lws("leader")),
    Embedding("lws-worker", e_lws("worker")),
    Embedding("custom-crd", e_custom),
    Embedding("pytorchjob-worker", e_pytorchjob),
    Embedding("volcano-task", e_volcano),
    Embedding("kubectl-dump", e_statefulset, "dump"),
    Embedding("list-of-dumps", e_job, "list"),
    Embedding("envsubst-output", e_deployment, "envsubst"),
    Embedding("multi-document", e_cronjob, "multidoc"),
]


# ------------------------------------------------------------------------------------------------ running a cell
@dataclass
class Built:
    files: list[ManifestFile]
    host: dict[str, Any]  # the object holding the pod (or the List item holding it)
    embedded: Embedded
    companions: list[dict[str, Any]]


def _dump_text(docs: list[dict[str, Any]], header: str = "") -> str:
    return header + yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)


ENVSUBST_HEADER = "# Rendered with: envsubst < executor.yaml.tmpl > executor.yaml\n"


def build_files(case: Case, embedding: Embedding, path_root: str) -> Built:
    emb = embedding.build(case)
    host, companions = emb.doc, [copy.deepcopy(c) for c in case.companions]
    docs: list[dict[str, Any]] = [host, *companions]
    header = ""
    if embedding.wrap == "dump":
        docs = [as_dump(d) for d in docs]
        host = docs[0]
    elif embedding.wrap == "list":
        items = [as_dump(d) for d in docs]
        docs = [{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}]
        host = items[0]
    elif embedding.wrap == "envsubst":
        header = ENVSUBST_HEADER
    elif embedding.wrap == "multidoc":
        ns = NS if case.namespace else None
        before = [configmap("run-settings", ns), {
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "eval-reader", **({"namespace": ns} if ns else {})}}]
        docs = [*before, host, *companions]
    # Positions (a YAML round-trip per file with findings) are what the wrapper columns put at risk: only there
    # is the text given, so the finding's line is checked; elsewhere the path alone is asserted, which keeps the
    # matrix fast.
    text = _dump_text(docs, header) if embedding.wrap else ""
    files = [ManifestFile(f"{path_root}/release.yaml", text, docs)]
    for i, extra in enumerate(case.other_files):
        extra_docs = copy.deepcopy(extra)
        files.append(ManifestFile(f"{path_root}/extra-{i}.yaml", _dump_text(extra_docs), extra_docs))
    return Built(files, host, emb, companions)


def expected_path(defect: Defect, built: Built) -> tuple[str, str]:
    """(kind of the object the finding names, path inside it)."""
    where = defect.where
    if where.startswith("@host:"):
        return built.host["kind"], where.removeprefix("@host:")
    if where.startswith("@group:"):
        return built.host["kind"], ".".join(p for p in (built.embedded.group_path, where.removeprefix("@group:")) if p)
    if where.startswith("@template:"):
        base = built.embedded.pod_path.rsplit(".spec", 1)[0] if built.embedded.pod_path != "spec" else ""
        return built.host["kind"], ".".join(p for p in (base, where.removeprefix("@template:")) if p)
    if where.startswith("@"):
        kind, _, path = where[1:].partition(":")
        return kind, path
    return built.host["kind"], ".".join(p for p in (built.embedded.pod_path, where) if p)


def at_or_under(key_path: str, path: str) -> bool:
    return key_path == path or key_path.startswith(f"{path}.")


# The pod-hardening rules report through GRPO809 on manifests by default; each is measured on its own here.
EACH_HARDENING_RULE = LintConfig(settings={"pod-hardening": {"each": True}})


def findings_of(built: Built, code: str):
    result = lint_release(built.files, select=frozenset({code}), config=EACH_HARDENING_RULE)
    assert not result.input_errors, [str(e) for e in result.input_errors]
    return [f for f in result.findings if f.code == code]


CELLS = [pytest.param(d, e, id=f"{d.id}--{e.id}") for d in DEFECTS for e in EMBEDDINGS]


@pytest.mark.parametrize(("defect", "embedding"), CELLS)
def test_defect_found_and_fix_clean(defect: Defect, embedding: Embedding, tmp_path):
    """The defect is reported with its code at its object path, and its fixed form is not reported."""
    if defect.only and embedding.id not in defect.only:
        pytest.skip(defect.skip_reason)
    bad = build_files(defect.bad(), embedding, str(tmp_path / "bad"))
    got = findings_of(bad, defect.code)
    kind, path = expected_path(defect, bad)
    shown = [f"{f.key_path}: {f.message}" for f in got]
    assert any(at_or_under(f.key_path, path) and kind in f.message for f in got), \
        f"expected {defect.code} at {kind} {path!r}; got {shown}"
    if embedding.wrap in ("list", "multidoc"):  # the object is not the file's first: its line is further down
        assert all(f.line > 1 for f in got if f.file.endswith("release.yaml")), [(f.line, f.key_path) for f in got]
    fixed = build_files(defect.fixed(), embedding, str(tmp_path / "fixed"))
    still = [f"{f.key_path}: {f.message}" for f in findings_of(fixed, defect.code)]
    assert not still, f"the fixed form is still reported: {still}"


def test_not_ray_containers_names_every_other_embedding():
    """NOT_RAY_CONTAINERS is written out before EMBEDDINGS exists: it must stay every embedding but the Ray
    head and worker containers."""
    ray = {e.id for e in EMBEDDINGS if e.id.startswith("ray") and not e.id.endswith("submitter")}
    assert set(NOT_RAY_CONTAINERS) == {e.id for e in EMBEDDINGS} - ray
