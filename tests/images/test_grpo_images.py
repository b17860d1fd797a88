"""grpo-images: the images a values file selects, the overlay it writes, and the in-cluster build Jobs.

Where the check stops: there is no Docker daemon, no registry and no cluster here. The local backend is run
against a stand-in `docker` on PATH that records its argv and writes the result file `docker buildx build
--metadata-file` documents (keys `containerimage.digest`, `containerimage.descriptor`, ...); the overlay is then
used as a user would, with the real Helm 4 CLI (`helm template -f values -f images.lock.yaml`) and grpo-lint.
The BuildKit Jobs are checked by grpo-lint (with the bundled Kubernetes object schemas), never run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from grpo_stack.catalog.images import IMAGES
from grpo_stack.imagebuild.plan import required_args
from grpo_stack.lint.release import lint_manifests
from grpo_stack.paths import REPO_ROOT

BIN = Path(sys.executable).parent
REGISTRY = "123456789012.dkr.ecr.us-west-2.amazonaws.com"
EFA = ["--build-arg", "EFA_INSTALLER_VERSION=1.43.1", "--build-arg", "EFA_INSTALLER_SHA256=" + "ab" * 32]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def images(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "grpo-images"), *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


def values(name: str) -> str:
    return str(REPO_ROOT / "values" / name)


@pytest.mark.parametrize(("file", "want"), [
    ("qwen3-235b.yaml", ["raycluster.image: " + f"{REGISTRY}/grpo-stack/verl:0.9.1-ray2.53.0-r2 from images/verl",
                         "reward-service.image:", "fsx-utils.image:"]),
    ("miles-qwen3-4b.yaml", [f"raycluster.image: {REGISTRY}/grpo-stack/miles:dec268f7-ray2.56.1-r1 from images/miles",
                             "reward-service.image:", "fsx-utils.image:"]),
    ("qwen3-8b.yaml eval/eval.yaml", ["lm-eval.image:"]),
])
def test_plan_builds_what_the_values_deploy(file, want):
    """The framework's Ray image, then each deployed component built from images/; upstream images are named,
    not built; the framework images get the EFA build arguments their Dockerfiles require."""
    proc = images("plan", *map(values, file.split()), "--registry", REGISTRY, *EFA)
    assert proc.returncode == 0, proc.stderr
    planned = [ln.split("] ", 1)[1] for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert len(planned) == len(want), proc.stdout
    for line, expected in zip(planned, want, strict=True):
        assert line.startswith(expected), (line, expected)
        assert ("EFA_INSTALLER_VERSION=1.43.1" in line) == line.startswith("raycluster."), line
    if file.endswith("eval/eval.yaml"):
        assert "not built here (upstream image, pinned in the values): vllm.image" in proc.stdout


def test_missing_efa_arguments_are_refused_naming_both():
    proc = images("plan", values("qwen3-8b.yaml"), "--registry", REGISTRY)
    assert proc.returncode == 2
    assert "--build-arg EFA_INSTALLER_VERSION=... (needed by verl" in proc.stderr
    assert "--build-arg EFA_INSTALLER_SHA256=... (needed by verl" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_required_arguments_are_read_from_each_dockerfile():
    """An ARG without a default is required; the framework Dockerfiles declare the EFA installer's two."""
    for name in ("verl", "miles"):
        assert required_args(REPO_ROOT / "images" / name / "Dockerfile") == ["EFA_INSTALLER_VERSION",
                                                                            "EFA_INSTALLER_SHA256"]
    for name in ("reward-service", "fsx-utils", "lm-eval"):
        assert required_args(REPO_ROOT / "images" / name / "Dockerfile") == []


@pytest.mark.parametrize("framework", sorted(IMAGES))
def test_framework_images_carry_their_build_label(framework):
    """The label GRPO330's declared build stands for: the Dockerfile labels the catalogued build."""
    text = (REPO_ROOT / IMAGES[framework].dockerfile).read_text()
    assert f'io.grpo-stack.build="{IMAGES[framework].tag}"' in text


def test_no_docker_is_a_clear_error(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    proc = images("build", values("qwen3-8b.yaml"), "--registry", REGISTRY, *EFA, "--push",
                  "-o", str(tmp_path / "lock.yaml"), env=env)
    assert proc.returncode == 2, proc.stderr
    assert "docker is not on PATH" in proc.stderr and "--backend cluster" in proc.stderr
    assert not (tmp_path / "lock.yaml").exists()


# A stand-in for `docker`: `buildx version` answers, `buildx build` records its argv and writes the result in the
# format docker buildx documents for --metadata-file (docs/reference/buildx_build.md, "--metadata-file").
FAKE_DOCKER = r"""#!{python}
import hashlib, json, sys
args = sys.argv[1:]
if args[:2] == ["buildx", "version"]:
    print("github.com/docker/buildx v0.30.1"); sys.exit(0)
with open({log!r}, "a") as fh:
    fh.write(json.dumps(args) + "\n")
ref = args[args.index("-t") + 1]
if {fail!r} and {fail!r} in ref:
    sys.exit(17)
digest = "sha256:" + hashlib.sha256(ref.encode()).hexdigest()
config = "sha256:" + hashlib.sha256(b"config" + ref.encode()).hexdigest()
meta = {{"buildx.build.ref": "builder/builder0/abc",
        "containerimage.config.digest": config,
        "containerimage.descriptor": {{"annotations": {{"config.digest": config}}, "digest": digest,
                                      "mediaType": "application/vnd.oci.image.manifest.v1+json", "size": 506}},
        "containerimage.digest": digest,
        "image.name": ref}}
if {nodigest!r}:
    meta.pop("containerimage.digest")
json.dump(meta, open(args[args.index("--metadata-file") + 1], "w"), indent=2)
"""


def fake_docker(tmp_path: Path, fail: str = "", nodigest: bool = False) -> tuple[dict, Path]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp_path / "docker.log"
    docker = bindir / "docker"
    docker.write_text(FAKE_DOCKER.format(python=sys.executable, log=str(log), fail=fail, nodigest=nodigest))
    docker.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}, log


def test_local_build_writes_an_overlay_helm_and_grpo_lint_accept(tmp_path, helm_bin, helm_env):
    """Each selected image is built with `docker buildx build --push --metadata-file` and its Dockerfile's build
    arguments; the overlay pins each by the digest from that file, and `helm template -f values -f overlay`
    renders every built image by that digest, which grpo-lint accepts (GRPO330 reads the declared build)."""
    env, log = fake_docker(tmp_path)
    lock = tmp_path / "images.lock.yaml"
    proc = images("build", values("qwen3-235b.yaml"), "--registry", REGISTRY, *EFA, "--push", "-o", str(lock),
                  env=env)
    assert proc.returncode == 0, proc.stderr
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert [c[c.index("-f") + 1].removeprefix(str(REPO_ROOT) + "/") for c in calls] == [
        "images/verl/Dockerfile", "images/reward-service/Dockerfile", "images/fsx-utils/Dockerfile"]
    assert all(c[:3] == ["buildx", "build", "--push"] and c[-1] == str(REPO_ROOT) for c in calls)
    assert "EFA_INSTALLER_VERSION=1.43.1" in calls[0] and "EFA_INSTALLER_VERSION=1.43.1" not in calls[1]
    assert "[1/3] verl: building" in proc.stdout and "[3/3] fsx-utils: pushed" in proc.stdout
    pinned = yaml.safe_load(lock.read_text())
    ray = pinned["raycluster"]["image"]
    assert ray["build"] == IMAGES["verl"].tag and ray["repository"] == f"{REGISTRY}/grpo-stack/verl"
    rendered = subprocess.run([str(helm_bin), "template", "grpo", str(REPO_ROOT / "charts" / "grpo-stack"),
                               "-f", values("qwen3-235b.yaml"), "-f", str(lock)], env=helm_env,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    for section in ("raycluster", "reward-service", "fsx-utils"):
        image = pinned[section]["image"]
        assert f"image: {image['repository']}@{image['digest']}" in rendered.stdout.replace('"', ""), section
    lint = subprocess.run([str(BIN / "grpo-lint"), "--no-cache", "--base", values("qwen3-235b.yaml"), str(lock)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "GRPO330" not in lint.stdout and "GRPO701" not in lint.stdout


def test_failed_build_writes_nothing(tmp_path):
    env, _ = fake_docker(tmp_path, fail="reward-service")
    lock = tmp_path / "images.lock.yaml"
    proc = images("build", values("qwen3-235b.yaml"), "--registry", REGISTRY, *EFA, "--push", "-o", str(lock),
                  env=env)
    assert proc.returncode == 1 and "exit 17" in proc.stderr
    assert not lock.exists()


def test_metadata_without_a_digest_is_an_error(tmp_path):
    """A result with no containerimage.digest (nothing was pushed) never becomes an overlay with a blank pin."""
    env, _ = fake_docker(tmp_path, nodigest=True)
    lock = tmp_path / "images.lock.yaml"
    proc = images("build", values("qwen3-8b.yaml"), "--registry", REGISTRY, *EFA, "--push", "-o", str(lock), env=env)
    assert proc.returncode == 1 and "no containerimage.digest" in proc.stderr
    assert not lock.exists()


def cluster_jobs(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return images("build", values("qwen3-235b.yaml"), "--registry", REGISTRY, *EFA, "--backend", "cluster",
                  "--namespace", "images", "--git-context", f"https://github.com/my-org/grpo-stack.git#{COMMIT}",
                  "--registry-secret", "ecr-push", "--run", "r1", *extra)


def test_in_cluster_jobs_render_and_lint_clean(tmp_path):
    """One rootless BuildKit Job per image plus a NetworkPolicy; grpo-lint finds nothing (object schemas
    included; the pod-hardening finding rootless BuildKit cannot avoid is suppressed with its reason in the
    manifest) and every kind was schema-checked."""
    path = tmp_path / "build-jobs.yaml"
    proc = cluster_jobs(tmp_path, "--jobs-file", str(path))
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(path.read_text()))
    assert [d["kind"] for d in docs] == ["NetworkPolicy", "Job", "Job", "Job"]
    for job in docs[1:]:
        pod = job["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        assert c["image"] == "moby/buildkit:v0.24.0-rootless"
        assert "buildctl-daemonless.sh build" in c["command"][2]
        assert f"context=https://github.com/my-org/grpo-stack.git#{COMMIT}" in c["command"][2]
        assert pod["securityContext"]["runAsUser"] == 1000 and not c["securityContext"].get("privileged")
        assert pod["volumes"][0]["secret"]["secretName"] == "ecr-push"
    assert "build-arg:EFA_INSTALLER_SHA256=" + "ab" * 32 in docs[1]["spec"]["template"]["spec"]["containers"][0][
        "command"][2]
    result = lint_manifests(str(path))
    assert not result.input_errors, [str(e) for e in result.input_errors]
    assert result.findings == [], [f"{f.code} {f.message}" for f in result.findings]
    assert not result.unchecked_kinds
    cli = subprocess.run([str(BIN / "grpo-lint"), "--no-cache", str(path)], capture_output=True, text=True,
                         cwd=tmp_path)
    assert cli.returncode == 0, cli.stdout + cli.stderr


def test_in_cluster_needs_a_commit_not_a_branch(tmp_path):
    proc = images("build", values("qwen3-8b.yaml"), "--registry", REGISTRY, *EFA, "--backend", "cluster",
                  "--namespace", "images", "--git-context", "https://github.com/my-org/grpo-stack.git#main",
                  "--registry-secret", "ecr-push", "--run", "r1")
    assert proc.returncode == 2 and "40-hex commit" in proc.stderr


FAKE_KUBECTL = r"""#!{python}
import sys
sys.stdout.write({text!r})
"""


def test_lock_from_cluster_reads_the_jobs_digests(tmp_path):
    """`lock --from-cluster` reads each finished build pod's termination message (the digest its script wrote)
    and the Job's annotations into the overlay; a pod not finished yet writes nothing (exit 1). kubectl is a
    stand-in printing `kubectl get pods -o json` shaped output."""
    docs = list(yaml.safe_load_all(cluster_jobs(tmp_path).stdout))[1:]
    digest = "sha256:" + "4" * 64
    pods = [{"metadata": {"name": f"{d['metadata']['name']}-x", "labels": d["spec"]["template"]["metadata"]["labels"],
                          "annotations": d["spec"]["template"]["metadata"]["annotations"]},
             "status": {"containerStatuses": [{"name": "buildkit", "state": {"terminated": {
                 "exitCode": 0, "message": digest + "\n"}}}]}} for d in docs]
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL.format(python=sys.executable, text=json.dumps({"items": pods})))
    kubectl.chmod(0o755)
    lock = tmp_path / "images.lock.yaml"
    proc = images("lock", "--from-cluster", "--namespace", "images", "--run", "r1", "--kubectl", str(kubectl),
                  "-o", str(lock))
    assert proc.returncode == 0, proc.stderr
    pinned = yaml.safe_load(lock.read_text())
    assert pinned["raycluster"]["image"] == {"repository": f"{REGISTRY}/grpo-stack/verl", "tag": IMAGES["verl"].tag,
                                             "digest": digest, "build": IMAGES["verl"].tag}
    assert set(pinned) == {"raycluster", "reward-service", "fsx-utils"}
    pods[1]["status"]["containerStatuses"][0]["state"] = {"running": {}}
    kubectl.write_text(FAKE_KUBECTL.format(python=sys.executable, text=json.dumps({"items": pods})))
    lock.unlink()
    proc = images("lock", "--from-cluster", "--namespace", "images", "--run", "r1", "--kubectl", str(kubectl),
                  "-o", str(lock))
    assert proc.returncode == 1 and "has not finished" in proc.stderr
    assert not lock.exists()
