"""The in-cluster backend: one rootless BuildKit Job per image (`buildctl-daemonless.sh`), context from git.

Each Job builds one Dockerfile from a git URL of this repository at a commit, pushes with the registry
credentials of a `kubernetes.io/dockerconfigjson` Secret, and ends with the pushed digest as its container's
termination message; `grpo-images lock --from-cluster` reads those into the values overlay.

Rootless BuildKit (moby/buildkit examples/kubernetes/job.rootless.yaml) runs as UID 1000 with no privileged
container, but needs seccomp and AppArmor Unconfined for its user namespaces: the namespace it runs in must allow
that (PodSecurity `privileged`; baseline and restricted refuse it). Where the check stops: the tests render these
Jobs and check them with grpo-lint and the Kubernetes object schemas; no BuildKit runs here.
"""

from __future__ import annotations

import re
import shlex

from .plan import ImageBuild

BUILDKIT_IMAGE = "moby/buildkit:v0.24.0-rootless"  # exact tag; the rootless variant (UID 1000)
DEADLINE_SECONDS = 6 * 3600  # images/verl compiles Transformer Engine's torch extension: hours on a small node
GIT_URL = re.compile(r"^(https://|ssh://|git@)[^\s#]+(\.git)?#[0-9a-f]{40}$")
LABEL = "grpo-stack.io/image-build"


class JobError(Exception):
    """The in-cluster build cannot be rendered from these arguments (exit 2)."""


def script(b: ImageBuild, git_context: str) -> str:
    """buildctl's build of one Dockerfile from the git context, then the digest as the termination message."""
    opts = ["--frontend", "dockerfile.v0", "--opt", f"context={git_context}", "--opt", f"filename={b.dockerfile}",
            "--opt", "platform=linux/amd64"]
    for k, v in sorted(b.build_args.items()):
        opts += ["--opt", f"build-arg:{k}={v}"]
    opts += ["--output", f"type=image,name={b.ref},push=true", "--metadata-file", "/tmp/metadata.json"]
    return "\n".join([
        "set -eu",
        "buildctl-daemonless.sh build " + shlex.join(opts),
        # buildctl writes containerimage.digest into the metadata file, as buildx does.
        "sed -n 's/.*\"containerimage.digest\": *\"\\(sha256:[0-9a-f]\\{64\\}\\)\".*/\\1/p' /tmp/metadata.json"
        " > /dev/termination-log",
        "test -s /dev/termination-log",
        "echo \"pushed " + b.ref + " $(cat /dev/termination-log)\"",
    ])


def job(b: ImageBuild, namespace: str, git_context: str, registry_secret: str, run: str) -> dict:
    labels = {"app.kubernetes.io/name": "grpo-images", "app.kubernetes.io/component": "image-build",
              LABEL: run, "grpo-stack.io/image": b.name}
    annotations = {"grpo-stack.io/values-key": b.values_key, "grpo-stack.io/image-ref": b.ref}
    if b.framework_build:
        annotations["grpo-stack.io/framework-build"] = b.framework_build
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"grpo-images-{b.name}-{run}", "namespace": namespace, "labels": labels,
                     "annotations": annotations},
        "spec": {
            "backoffLimit": 0, "activeDeadlineSeconds": DEADLINE_SECONDS, "ttlSecondsAfterFinished": 7 * 86400,
            "template": {
                "metadata": {"labels": dict(labels), "annotations": dict(annotations)},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                                        "fsGroup": 1000, "seccompProfile": {"type": "Unconfined"},
                                        "appArmorProfile": {"type": "Unconfined"}},
                    "containers": [{
                        "name": "buildkit",
                        "image": BUILDKIT_IMAGE,
                        "command": ["sh", "-c", script(b, git_context)],
                        "env": [{"name": "BUILDKITD_FLAGS", "value": "--oci-worker-no-process-sandbox"},
                                {"name": "DOCKER_CONFIG", "value": "/home/user/.docker"}],
                        "resources": {"requests": {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi"},
                                      "limits": {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi"}},
                        "securityContext": {"capabilities": {"drop": ["ALL"]}},
                        "terminationMessagePolicy": "File",
                        "volumeMounts": [
                            {"name": "registry-auth", "mountPath": "/home/user/.docker", "readOnly": True},
                            {"name": "buildkitd", "mountPath": "/home/user/.local/share/buildkit"},
                        ],
                    }],
                    "volumes": [
                        {"name": "registry-auth", "secret": {"secretName": registry_secret, "items": [
                            {"key": ".dockerconfigjson", "path": "config.json"}]}},
                        {"name": "buildkitd", "emptyDir": {}},
                    ],
                },
            },
        },
    }


def network_policy(namespace: str, run: str) -> dict:
    """No ingress; egress to DNS and HTTP(S) only (git, the registries, PyPI, the EFA installer)."""
    return {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": f"grpo-images-{run}", "namespace": namespace,
                     "labels": {"app.kubernetes.io/name": "grpo-images", LABEL: run}},
        "spec": {
            "podSelector": {"matchLabels": {LABEL: run}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [],
            "egress": [{"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
                       {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 80}]}],
        },
    }


# Rootless BuildKit's user namespaces need what pod hardening forbids (moby/buildkit docs/rootless.md): said at
# the pod spec, with the reason, so grpo-lint reports the rest of the manifest.
SUPPRESSION = ("# grpo-lint: disable=GRPO809 rootless BuildKit needs seccomp and AppArmor Unconfined and setuid "
               "newuidmap (allowPrivilegeEscalation) for its user namespaces; no privileged container, UID 1000")


def manifest(docs: list[dict]) -> str:
    """The YAML stream, with the hardening suppression above each Job's pod spec."""
    import yaml

    out = []
    for doc in docs:
        text = yaml.safe_dump(doc, sort_keys=False, width=1000)
        if doc["kind"] == "Job":
            text = text.replace("\n    spec:\n", f"\n    {SUPPRESSION}\n    spec:\n", 1)
        out.append(text)
    return "---\n".join(out)


def jobs(builds: list[ImageBuild], namespace: str, git_context: str, registry_secret: str, run: str) -> list[dict]:
    if not GIT_URL.match(git_context):
        raise JobError(f"--git-context {git_context!r}: give the repository's git URL and the full commit the "
                       "images are built from, e.g. https://github.com/my-org/grpo-stack.git#<40-hex commit> (a "
                       "branch moves; the overlay's digests must come from one tree)")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", run):
        raise JobError(f"--run {run!r}: lowercase letters, digits and '-', at most 22 characters")
    return [network_policy(namespace, run), *(job(b, namespace, git_context, registry_secret, run) for b in builds)]
