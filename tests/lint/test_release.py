"""Manifest mode models a release: the manifest files of one run are linted together."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from grpo_stack.cli.lint import main
from grpo_stack.paths import REPO_ROOT

SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {{name: sandbox{ns}}}\nspec:\n  type: ExternalName\n" \
          "  externalName: sandbox.example.com\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}{ns}}}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: c
          image: "registry.example/app:1.2.3"
          imagePullPolicy: IfNotPresent
          env:
            - {{name: SANDBOX_URL, value: "{url}"}}
"""


def ns(value: str | None) -> str:
    return f", namespace: {value}" if value else ""


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# What these tests are about; the pod-security rules (GRPO81x) would report the minimal fixtures' pods too.
RELEASE_CODES = "GRPO002,GRPO101,GRPO850,GRPO851"


def lint(capsys, *argv) -> tuple[int, list[dict]]:
    code = main(["--format", "json", "--select", RELEASE_CODES, *argv])
    out = capsys.readouterr().out
    return code, json.loads(out)["findings"]


def codes(findings) -> list[tuple[str, str]]:
    return sorted((f["code"], Path(f["file"]).name) for f in findings)


def test_namespace_mix_across_files_is_found_only_when_linted_together(capsys, tmp_path):
    """The predecessor's sandbox Service set `namespace: verl` in one file, and the Deployment calling it by its
    bare name none in another: each file alone is consistent, the release is not. A Deployment that refers to
    nothing of the other file is not compared (unrelated samples in one folder)."""
    a = write(tmp_path, "svc.yaml", SERVICE.format(ns=ns("verl")))
    b = write(tmp_path, "deploy.yaml", DEPLOYMENT.format(name="trainer", ns="", url="http://sandbox:8080"))
    assert lint(capsys, a) == (0, []) and lint(capsys, b) == (0, [])
    code, findings = lint(capsys, a, b)
    assert code == 1 and codes(findings) == [("GRPO850", "deploy.yaml")]
    unrelated = write(tmp_path, "other.yaml", DEPLOYMENT.format(name="web", ns="", url="http://x.example.com"))
    assert lint(capsys, a, unrelated) == (0, [])


def test_kustomize_base_takes_the_namespace_its_overlay_sets(capsys, tmp_path):
    """A GitOps base lists its files in a kustomization and states no namespace; the overlay that includes it
    sets one (`namespace: NS`) for every object, the overlay's own Service beside it. Linted as files, the base's
    Deployment is in the overlay's namespace, as kustomize applies it. A base no overlay of the files places (its own
    kustomization sets no namespace) is applied into the kubectl context's namespace, and the pair is reported. The
    lint cache keys each file with the kustomization beside it: every edit below is a miss, not the earlier answer."""
    base, overlay = tmp_path / "base" / "app", tmp_path / "staging" / "app"
    base.mkdir(parents=True)
    overlay.mkdir(parents=True)
    svc = write(overlay, "svc.yaml", SERVICE.format(ns=""))
    dep = write(base, "deploy.yaml", DEPLOYMENT.format(name="trainer", ns="", url="http://sandbox:8080"))
    (base / "kustomization.yaml").write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                             "resources:\n  - ./deploy.yaml\n")
    (overlay / "kustomization.yaml").write_text("namespace: verl\nresources: [../../base/app, svc.yaml]\n")
    assert lint(capsys, svc, dep) == (0, [])
    (overlay / "kustomization.yaml").write_text("resources: [../../base/app, svc.yaml]\n")
    placed = write(overlay, "svc.yaml", SERVICE.format(ns=ns("verl")))  # the Service states its own namespace
    code, findings = lint(capsys, placed, dep)
    assert code == 1 and codes(findings) == [("GRPO850", "deploy.yaml")]
    (base / "kustomization.yaml").write_text("namespace: verl\nresources: [deploy.yaml]\n")
    assert lint(capsys, placed, dep) == (0, [])
    (base / "kustomization.yaml").write_text("namespace: verl\nresources: [other.yaml]\n")  # does not list it
    code, findings = lint(capsys, placed, dep)
    assert code == 1 and codes(findings) == [("GRPO850", "deploy.yaml")]


def test_url_checked_against_services_of_every_file(capsys, tmp_path):
    """A URL in one file resolves against a Service another file defines; the predecessor's hard-coded
    `default` namespace is caught when that Service is in the release. A name in the files' namespace that none of
    them defines is a warning: the files linted together may not be all that is applied there."""
    svc = write(tmp_path, "svc.yaml", SERVICE.format(ns=ns("verl")))
    good = write(tmp_path, "good.yaml", DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://sandbox.verl.svc.cluster.local:8080"))
    assert lint(capsys, svc, good) == (0, [])
    bad = write(tmp_path, "bad.yaml", DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://sandbox.default.svc.cluster.local:8080"))
    assert lint(capsys, bad)[0] == 0  # alone: a shared service in another namespace, not ours to judge
    code, findings = lint(capsys, svc, bad)
    assert code == 1 and codes(findings) == [("GRPO101", "bad.yaml")]
    missing = write(tmp_path, "missing.yaml", DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://sandbox-fusion.verl.svc.cluster.local:8080"))
    code, findings = lint(capsys, svc, missing)  # another file may apply that Service: a warning naming it
    assert code == 0 and codes(findings) == [("GRPO101", "missing.yaml")]
    assert findings[0]["severity"] == "warning"
    assert "no Service named 'sandbox-fusion'" in findings[0]["message"]
    assert "assumed: no file outside these applies one" in findings[0]["message"]


def test_namespace_option_sets_the_expectation(capsys, tmp_path):
    """--namespace NS: objects elsewhere are refused by `kubectl apply -n NS`; objects without one take NS."""
    a = write(tmp_path, "svc.yaml", SERVICE.format(ns=ns("team")))
    b = write(tmp_path, "deploy.yaml", DEPLOYMENT.format(name="sandbox", ns="", url="http://x.example.com"))
    code, findings = lint(capsys, "--namespace", "verl", a, b)
    assert code == 1 and codes(findings) == [("GRPO850", "svc.yaml")]
    assert "kubectl apply -n verl" in findings[0]["message"]
    assert lint(capsys, "--namespace", "team", a, b) == (0, [])


def test_helm_template_output_without_namespaces_is_clean(capsys, tmp_path):
    """`helm template` without --namespace writes no metadata.namespace and renders .Release.Namespace as
    `default`: applied with -n, it is one consistent release."""
    svc = write(tmp_path, "svc.yaml", SERVICE.format(ns=""))
    dep = write(tmp_path, "deploy.yaml", DEPLOYMENT.format(
        name="trainer", ns="", url="http://sandbox.default.svc.cluster.local:8080"))
    assert lint(capsys, svc, dep) == (0, [])


def test_placeholders_in_an_envsubst_template_are_found(capsys, tmp_path):
    p = write(tmp_path, "tpl.yaml", SERVICE.format(ns=ns("'${NAMESPACE}'")))
    code, findings = lint(capsys, p)
    assert code == 1 and [f["code"] for f in findings] == ["GRPO851"] and "${NAMESPACE}" in findings[0]["message"]


@pytest.mark.parametrize("values", ["qwen3-235b.yaml", "miles-qwen3-4b.yaml"])
def test_chart_output_lints_clean_in_manifest_mode(capsys, tmp_path, values):
    """The two modes agree: what the chart renders from a shipped values file is a clean release."""
    out = tmp_path / "rendered"
    subprocess.run([str(Path(sys.executable).parent / "grpo-render"), str(REPO_ROOT / "values" / values),
                    "--namespace", "grpo", "-o", str(out)], check=True, capture_output=True)
    files = sorted(str(p) for p in out.glob("*.yaml"))
    assert len(files) > 5
    assert lint(capsys, *files) == (0, [])
    assert lint(capsys, "--namespace", "grpo", *files) == (0, [])


def test_a_file_linted_alone_may_name_a_service_another_file_applies(capsys, tmp_path):
    """One file is not the whole set: a URL to a Service it does not define is not judged (another file may apply
    it; on eight such URLs in the labelled foreign corpora one always did), where the same URL with the files
    linted together is an error (above). A Service of a near name in the file makes it a warning: a misspelling."""
    other = write(tmp_path, "other.yaml", SERVICE.format(ns=ns("verl")) + "---\n" + DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://reward-api.verl.svc.cluster.local:8080"))
    assert lint(capsys, other) == (0, [])
    near = write(tmp_path, "near.yaml", SERVICE.format(ns=ns("verl")) + "---\n" + DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://sandbx.verl.svc.cluster.local:8080"))
    code, findings = lint(capsys, near)
    assert code == 0 and codes(findings) == [("GRPO101", "near.yaml")]
    assert findings[0]["severity"] == "warning" and "'sandbox'" in findings[0]["message"]


def test_a_one_label_url_host_names_a_service_of_the_set(capsys, tmp_path):
    """`http://llm-inference:8000` resolves only to a Service of the pod's own namespace. In files linted together
    that define Services, a host none of them names is a warning that states the assumption (a file outside the
    set may apply it); the same file alone is not judged, and a host the set defines is fine."""
    svc = write(tmp_path, "svc.yaml", SERVICE.format(ns=""))
    missing = write(tmp_path, "missing.yaml", DEPLOYMENT.format(name="rag", ns="", url="http://llm-inference:8000/v1"))
    assert lint(capsys, missing) == (0, [])
    code, findings = lint(capsys, svc, missing)
    assert code == 0 and codes(findings) == [("GRPO101", "missing.yaml")]
    assert findings[0]["severity"] == "warning" and "no Service 'llm-inference' in these files" in \
        findings[0]["message"] and "assumed" in findings[0]["message"]
    present = write(tmp_path, "present.yaml", DEPLOYMENT.format(name="rag", ns="", url="http://sandbox:8080/run"))
    assert lint(capsys, svc, present) == (0, [])


CLAIM = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}{ns}}}\nspec:\n" \
        "  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 10Gi}}}}\n"
TRAINER = """apiVersion: batch/v1
kind: Job
metadata: {{name: train{ns}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: "registry.example/train:1.2.3"
          volumeMounts: [{{name: out, mountPath: /out}}]
      volumes:
        - name: out
          persistentVolumeClaim: {{claimName: {claim}}}
"""


def test_a_pod_claim_the_set_does_not_declare_is_a_warning(capsys, tmp_path):
    """Files linted together that declare claims are the set that makes them: a pod's claim none of them declares
    in its namespace keeps the pod Pending (a warning naming the assumption that nothing else creates it); a set
    that declares no claim, a file linted alone and a claim declared in the pod's namespace are not judged (a claim
    that states no namespace beside a pod that states one is GRPO850's)."""
    models = write(tmp_path, "models.yaml", CLAIM.format(name="models", ns=""))
    job = write(tmp_path, "job.yaml", TRAINER.format(ns="", claim="checkpoints"))
    code, findings = lint(capsys, models, job)
    assert code == 0 and codes(findings) == [("GRPO101", "job.yaml")]
    assert findings[0]["severity"] == "warning"
    assert "no file declares PVC 'checkpoints' (they declare models)" in findings[0]["message"]
    assert lint(capsys, job) == (0, [])
    other = write(tmp_path, "other.yaml", TRAINER.format(ns="", claim="checkpoints").replace("name: train", "name: b"))
    assert lint(capsys, job, other) == (0, [])  # declares no claim: its claims come from another step
    assert lint(capsys, models, write(tmp_path, "ok.yaml", TRAINER.format(ns="", claim="models"))) == (0, [])
    in_default = write(tmp_path, "default.yaml", CLAIM.format(name="models", ns=ns("default")))
    elsewhere = write(tmp_path, "pulse.yaml", TRAINER.format(ns=ns("pulse"), claim="models"))
    code, findings = lint(capsys, in_default, elsewhere)
    [claim] = [f for f in findings if f["code"] == "GRPO101"]  # GRPO850 names the namespace mix as well
    assert "declared in namespace 'default' and the pod runs in 'pulse'" in claim["message"]


GATEWAY = """\
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: rollout-gw, namespace: verl}
spec:
  gatewayClassName: istio
  listeners: [{name: web, port: 80, protocol: HTTP}]
"""


def test_a_url_may_name_the_service_a_gateway_controller_deploys(capsys, tmp_path):
    """Istio deploys a Gateway's proxy behind a Service named `<gateway>-<gatewayClassName>`: a URL naming it, in
    files linted together with the Gateway, names a Service the set makes."""
    svc = write(tmp_path, "svc.yaml", SERVICE.format(ns=ns("verl")))
    gateway = write(tmp_path, "gateway.yaml", GATEWAY)
    caller = write(tmp_path, "caller.yaml", DEPLOYMENT.format(
        name="trainer", ns=ns("verl"), url="http://rollout-gw-istio.verl.svc.cluster.local:80"))
    assert lint(capsys, svc, gateway, caller) == (0, [])
    code, findings = lint(capsys, svc, caller)
    assert codes(findings) == [("GRPO101", "caller.yaml")]


JOB_WITH_SCRIPT = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: sync-weights}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: sync
          image: registry.example/sync:1.0.2
          command: ["python", "/scripts/sync.py"]
          envFrom: [{{configMapRef: {{name: sync-settings, optional: true}}}}]
          volumeMounts: [{{name: scripts, mountPath: /scripts}}, {{name: ca, mountPath: /ca}}]
      volumes:
        - {{name: scripts, configMap: {{name: {script}}}}}
        - {{name: ca, configMap: {{name: kube-root-ca.crt}}}}
"""
SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: prompts}
data: {prompts.txt: "hello"}
"""


def test_a_config_map_the_set_does_not_declare_is_a_warning(capsys, tmp_path):
    """As for claims: files linted together that declare ConfigMaps make the set's ConfigMaps, so a pod's volume of
    one none of them declares keeps the pod from starting (a warning naming the assumption); an optional one, the
    CA bundle Kubernetes publishes in every namespace, a set that declares none and a file linted alone are not
    judged."""
    prompts = write(tmp_path, "prompts.yaml", SETTINGS)
    job = write(tmp_path, "job.yaml", JOB_WITH_SCRIPT.format(script="sync-script"))
    code, findings = lint(capsys, prompts, job)
    assert code == 0 and codes(findings) == [("GRPO101", "job.yaml")]
    assert "no file declares ConfigMap 'sync-script'" in findings[0]["message"]
    assert lint(capsys, job) == (0, [])
    other = write(tmp_path, "other.yaml", JOB_WITH_SCRIPT.format(script="x").replace("sync-weights", "other"))
    assert lint(capsys, job, other) == (0, [])
    declared = write(tmp_path, "script.yaml", SETTINGS.replace("prompts", "sync-script"))
    assert lint(capsys, prompts, job, declared) == (0, [])
