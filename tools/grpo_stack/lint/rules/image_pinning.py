"""GRPO701 image-pinning."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator

from ...catalog import official_images
from ...errors import InputError
from ..context import node_at
from ..finding import Hit, Severity
from ._image_files import is_image_file
from ._objects import containers, values_section

CODE = "GRPO701"
NAME = "image-pinning"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("An image is not pinned (latest, no tag, floating tag), is re-pulled on every start, "
           "or differs where it must not.")
DOC = """## What it does
Checks every container image in every pod template (workloads, CronJobs, Ray groups of RayCluster, RayJob and
RayService, JobSet, LeaderWorkerSet, custom resources with a pod template). An image is **floating** when:

- it has neither tag nor digest (Kubernetes pulls `latest`);
- its tag contains a moving word (`latest`, `main`, `master`, `nightly`, `edge`, `dev`, `develop`, `head`,
  `canary`, `stable`, `rolling`, or a distribution name such as `slim`, `alpine`, `bookworm`, `jammy`) and no
  immutable marker;
- it is one of Docker's official images and its tag is a bare major or major.minor version (`3`, `3.11`,
  `3.11-slim`, `12.4-runtime`) with no immutable marker: Docker Official Images document `3.11` as following every
  `3.11.x` release. On any other image a bare version (`myorg/app:1.0`, `team/trainer:v2`) is read as the
  project's release tag, one build, as reviewers of foreign manifests read it on every labelled corpus; list a
  project's moving `1.0` as floating in the config;
- its tag has no digit at all (`openmpi`, `gpu`, `prod`): a name without a version is re-pushed with each
  release (a variant's versioned tag is `0.5.0-openmpi`). An error on Docker's official images, a warning on
  others, as for bare versions;
- it matches a `floating` pattern in the lint config.

An **immutable marker** is a digest, a full `x.y.z` version, a date stamp (`20250609`, `2025-06-09`), a commit hash
(7–40 hex digits with at least one digit), a `-rN` build revision, or a calendar release (`YY.MM` or `YYYY.MM`,
as NGC's monthly `nvcr.io/nvidia/pytorch:24.05-py3`; not on a distribution's base image such as `ubuntu:22.04`,
which follows its release's updates). Any other project-built tag
(`server-20250609`, `a1b2c3d`, `build-417`, `verl-0.9.1-cu128`) is taken as pinned; list tags your registry
moves in the config. Any tag of a registry that never moves a published tag (`registry.k8s.io`: the Kubernetes
image promoter refuses to retag, so `registry.k8s.io/pause:3.9` is one build) is pinned unless the config lists it
as floating. An image no registry holds is not judged for its tag: a one-segment name (or
`docker.io/library/X`) that is none of Docker's official images (catalog/docker_official_images.json), the only
images published there, is a build loaded on the node (`kind load`), as is a name under `local/`, `ko.local`,
`kind.local` or `dev.local` (never pushed, by ko's and Knative's convention); it is an error only when its pull policy
(`Always`, or the default for `latest` and no tag) makes the kubelet pull it, which fails; under another policy a
`latest` tag on it (or none) is a warning: each node keeps whichever build was loaded there last (a descriptive tag
such as `:local` or `:dev` may name one build and is not judged). A tag that is still a
placeholder (`<tag>`, `${TAG}`) is not judged, nor an image file on the node
(`/images/trainer_v1.2.sif`, run by an Apptainer or Slurm virtual kubelet): it has no tag. A container without an
image in a custom resource outside the core, KubeRay, JobSet and LeaderWorkerSet groups gets its image from the
resource's controller and is not checked; an `image` field of such a resource outside its pod templates (an image its
operator runs: a loader, a builder) is checked like a container's. In the chart's own
rendered output (values mode), pinned images must use `imagePullPolicy: IfNotPresent`; on other manifests
`Always` on a pinned image (an exact tag or a digest) is a warning: it runs the same build, but every container
start waits on the registry, so a restart fails where the registry is unreachable or rate-limited. The Ray head and
every Ray worker group must run the same image in their Ray container (the first; sidecars such as a Redis or a
log shipper run their own images); accelerator variants of one build (`-gpu`, `-cpu`, `-cu128`, `-rocm6.2` in
the tag) count as the same image, so a CPU head on `ray:2.52.0` with workers on `ray:2.52.0-gpu` is fine, and so
does a release tag stamped with its build commit (`ray-ml:2.6.3.54de39-py38` beside `ray-ml:2.6.3-py38`) and Ray's
own image families at one tag (`rayproject/ray-ml:2.7.1` beside `rayproject/ray:2.7.1`: the same Ray and Python). An
`image` field of a custom resource outside its pod templates gets the same `Always` warning from the
`imagePullPolicy` beside it. Such fields are read by shape: an `image` or `<role>Image` key (an operator's
`devicePluginImage`) whose value names `repo/name[:tag]` or `name:tag`, and the `image` of a container written
outside a pod template (an Argo Workflow step's `container`, `image: busybox`).

Config (`.grpo-lint.yaml`): `image-pinning: {floating: ["myrepo/base:prod"], pinned: ["myrepo/app:release"]}`,
shell-style patterns matched against `repository:tag`; `pinned` wins over everything but a missing tag.

## Why is this bad?
A floating tag changes under a running cluster: the predecessor's driver images drifted between Python 3.11 and
3.12 across Jobs. `Always` re-pulls a multi-gigabyte image on every restart and breaks air-gapped clusters.
A head and workers on different builds fail at the first Ray call with version mismatches.

## Example
```yaml
fsx-utils:
  image: {repository: python, tag: 3.11-slim, digest: ""}
```
Use instead:
```yaml
fsx-utils:
  image: {repository: python, tag: 3.11.15-slim, digest: ""}
```

## Fix
Pin the tag to an exact release (or set `digest`), and keep `IfNotPresent`.
"""

# Words that name a moving target; distribution names (`slim`, `bookworm`) follow their base image's updates.
MOVING_WORDS = frozenset({"latest", "main", "master", "nightly", "edge", "dev", "develop", "head", "canary",
                          "stable", "rolling", "slim", "alpine", "bookworm", "bullseye", "trixie", "jammy", "noble"})
FULL_VERSION = re.compile(r"(?<![0-9.])v?\d+\.\d+\.\d+")
DATE_STAMP = re.compile(r"(?<!\d)(\d{8}|\d{4}-\d{2}-\d{2})(?!\d)")
COMMIT = re.compile(r"(?<![0-9a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![0-9a-f])")
REVISION = re.compile(r"-r\d+$")
BARE_VERSION = re.compile(r"^v?\d+(\.\d+)?([-_.]|$)")
# A calendar release (NGC's monthly `24.05-py3`, `2024.06`): one build per month, never moved; a distribution's
# base image is the exception (`ubuntu:22.04` follows the release's updates).
CALENDAR_RELEASE = re.compile(r"^(20)?[1-3]\d\.(0[1-9]|1[0-2])(\.\d+)?([-_][a-z].*)?$", re.IGNORECASE)
DISTRIBUTIONS = frozenset({"ubuntu", "debian", "centos", "rockylinux", "almalinux", "fedora", "amazonlinux",
                           "alpine", "busybox"})
# API groups whose pod templates must name every image; elsewhere a container without one gets it from the
# custom resource's controller (Kubeflow Trainer runtimes, operators that inject their own build).
CORE_GROUPS = ("v1", "apps/", "batch/", "ray.io/", "jobset.x-k8s.io/", "leaderworkerset.x-k8s.io/")


# Registries whose promotion process never moves a published tag: registry.k8s.io serves only images the
# Kubernetes image promoter copied there, and it refuses to retag (`pause:3.9` is one build forever).
IMMUTABLE_TAG_REGISTRIES = ("registry.k8s.io/",)
PLACEHOLDER = re.compile(r"[<>${}]")


def official(repo: str) -> bool:
    """A Docker Official Image (`python`, `docker.io/library/python`): the images whose bare major/minor tags are
    documented to follow every patch release. Elsewhere a version-like tag may be a project's one build; a
    one-segment name Docker publishes no official image for (`my-backend:local`) is a locally built one."""
    name = _library_name(repo)
    return name is not None and name in official_images.names()


def _library_name(repo: str) -> str | None:
    """The name `repo` has in Docker Hub's `library/` namespace (`python`, `docker.io/library/python`), or None for
    a repository anywhere else (another registry, an organisation's)."""
    parts = repo.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        if parts[0] not in ("docker.io", "index.docker.io", "registry-1.docker.io"):
            return None
        parts = parts[1:]
    if len(parts) == 2 and parts[0] == "library":
        parts = parts[1:]
    return parts[0] if len(parts) == 1 else None

CONFIG_KEY = "image-pinning"  # the `.grpo-lint.yaml` section this rule reads from ctx.extra


def read_config(section: object, file: str) -> dict[str, tuple[str, ...]]:
    """The `image-pinning` section: {floating: [globs], pinned: [globs]}, both optional."""
    if section is None:
        return {}
    if not isinstance(section, dict) or set(section) - {"floating", "pinned"}:
        raise InputError(file, "expected a mapping with `floating` and/or `pinned` lists of image patterns",
                         key_path=CONFIG_KEY)
    out = {}
    for key, patterns in section.items():
        patterns = patterns or []
        if not isinstance(patterns, list) or not all(isinstance(p, str) and p.strip() for p in patterns):
            raise InputError(file, "expected a list of `repository:tag` patterns (shell-style globs)",
                             key_path=f"{CONFIG_KEY}.{key}")
        out[key] = tuple(patterns)
    return out


# Names that say an image was never pushed: ko's and Knative's `ko.local`, `kind.local`, `dev.local` (images that
# skip tag resolution, loaded on the node) and a `local/` namespace (`local/batch-api:dev` after `kind load`).
LOCAL_PREFIXES = frozenset({"local", "ko.local", "kind.local", "dev.local"})


def local_build(image: str) -> bool:
    """The image is named as never pushed (LOCAL_PREFIXES), or resolves to Docker Hub's `library/` namespace (one
    segment, or docker.io/library/X) and is none of Docker's official images, the only ones published there: no
    registry holds it, so it is a build loaded on the node (`kind load`, `minikube image load`)."""
    repo = split(image)[0]
    if not repo or is_image_file(image) or PLACEHOLDER.search(repo):
        return False
    if repo.split("/")[0] in LOCAL_PREFIXES and "/" in repo:
        return True
    name = _library_name(repo)
    return name is not None and "." not in name and name not in official_images.names()


def _latest(image: str) -> bool:
    """The image goes by `latest` (or by no tag, which is `latest`) and no digest: the API server defaults its pull
    policy to Always, and a build loaded on the node under it is the tag every build gets (a descriptive tag such as
    `:local`, `:dev`, `:cpu` may name one build)."""
    _repo, tag, digest = split(image)
    return not digest and tag in (None, "latest")


def _pull_policy(c: dict, image: str) -> str:
    """The container's imagePullPolicy as the API server defaults it: Always for `latest` or no tag."""
    if c.get("imagePullPolicy"):
        return str(c["imagePullPolicy"])
    return "Always" if _latest(image) else "IfNotPresent"


def split(image: str) -> tuple[str, str | None, str | None]:
    """(repository, tag, digest)"""
    repo, _, digest = image.partition("@")
    last = repo.rsplit("/", 1)[-1]
    tag = None
    if ":" in last:
        repo, tag = repo.rsplit(":", 1)
    return repo, tag, digest or None


def floating_reason(image: str, config: dict | None = None) -> str | None:
    """Why `image` is floating, or None when it is pinned (the rule in DOC)."""
    if is_image_file(image):
        return None
    repo, tag, digest = split(image)
    if digest:
        return None
    if not tag:
        return "no tag"
    if PLACEHOLDER.search(tag):  # `<tag>`, `${TAG}`: filled in before applying, not a tag yet
        return None
    config = config or {}
    ref = f"{repo}:{tag}"
    if any(fnmatch.fnmatchcase(ref, pat) for pat in config.get("pinned") or ()):
        return None
    if any(fnmatch.fnmatchcase(ref, pat) for pat in config.get("floating") or ()):
        return f"tag {tag!r} is listed as floating in the lint config"
    if repo.startswith(IMMUTABLE_TAG_REGISTRIES):
        return None
    if any(rx.search(tag) for rx in (FULL_VERSION, DATE_STAMP, COMMIT, REVISION)):
        return None
    words = {w.lower() for w in re.split(r"[-_.]", tag)}
    moving = sorted(words & MOVING_WORDS)
    if moving:
        return f"`{tag}` is a moving tag ({moving[0]})"
    if CALENDAR_RELEASE.match(tag) and repo.rsplit("/", 1)[-1] not in DISTRIBUTIONS:
        return None
    if BARE_VERSION.match(tag):
        if not official(repo):
            return None  # a project's release tag (`team/app:1.0`): one build, unless the config lists it
        return f"floating tag {tag!r} (a bare major/minor version moves with each release)"
    if not any(ch.isdigit() for ch in tag) and repo == repo.lower():  # upper case: a placeholder, not a reference
        return f"tag {tag!r} names no version (no digit): it is re-pushed with each release"
    return None


# Accelerator variants of one build (`ray:2.52.0` on a CPU head, `ray:2.52.0-gpu` / `-cu128` on GPU workers).
VARIANT = re.compile(r"-(gpu|cpu|cu\d+|rocm[\d.]*)(?=-|$)")


# A release tag stamped with its build commit (`2.6.3.54de39-py38` beside `2.6.3-py38`): the same version, and
# Ray checks that head and workers agree on the version (and Python), not on the tag.
COMMIT_STAMP = re.compile(r"(\d+\.\d+\.\d+)[.+][0-9a-f]{6,40}(?=[-_]|$)")


# Ray's own image families (rayproject/ray, ray-ml with ML libraries, ray-llm with vLLM): at one release tag they
# carry the same Ray and the same default Python, which is all Ray compares between head and workers.
RAY_FAMILY = re.compile(r"^((docker\.io/)?rayproject/ray)(-ml|-llm)$")


def _build(image: str) -> str:
    """The build an image is a variant of: Ray's image families at one tag, a tag's or a repository's accelerator
    variant (`2.40.0-gpu`, a project's own `trainer-gpu` beside `trainer-cpu`), a tag's commit stamp."""
    repo, tag, digest = split(image)
    if digest:
        return image
    head, slash, last = RAY_FAMILY.sub(lambda m: m.group(1), repo).rpartition("/")
    repo = f"{head}{slash}{VARIANT.sub('', last) or last}"
    return f"{repo}:{COMMIT_STAMP.sub(lambda m: m.group(1), VARIANT.sub('', tag))}" if tag else repo


def _controller_supplied(o) -> bool:
    """A container with no image in a custom resource outside the groups that require one: its controller fills
    the image in (a Kubeflow Trainer runtime's trainer node, for one)."""
    api = str(o.obj.get("apiVersion") or "")
    return not (api == "v1" or api.startswith(CORE_GROUPS))


CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})
# A value its controller fills in before use: an Argo Workflow's `{{inputs.parameters.image}}`, a `$(VAR)`.
TEMPLATED = re.compile(r"\{\{|\$\(|\$\{")


def _image_fields(ctx, o) -> Iterator[tuple[str, str]]:
    """Image references of a custom resource's spec, not those of its pod templates' containers: an `image` or
    `<role>Image` field (an operator's `devicePluginImage`) naming `repo/name[:tag]` or `name:tag`, and the `image`
    of a container written outside a pod template (an Argo Workflow step's `container`: `image: busybox`)."""
    for path, value in ctx.strings_under(o, "spec"):
        keys = path.split(".")
        last = keys[-1]
        if CONTAINER_LISTS & set(keys) or " " in value or not (
                last == "image" or (last.endswith("Image") and last[:1].islower())):
            continue
        parent = node_at(o.obj, path.rsplit(".", 1)[0])
        container = last == "image" and isinstance(parent, dict) and ("command" in parent or "args" in parent)
        if ("/" in value or ":" in value or container) and not TEMPLATED.search(value):
            yield path, value


def check(ctx) -> Iterator[Hit]:
    config = ctx.extra.get("image-pinning") or {}
    ray_images: dict[str, set[str]] = {}
    for o, pod_path, pod in ctx.pod_templates():
        section = values_section(ctx, o, pod_path)
        if section and section.startswith("raycluster"):
            section = "raycluster"
        for field, i, c in containers(pod):
            image, path = str(c.get("image", "")), f"{pod_path}.{field}.{i}"
            key, where = (f"{section}.image.tag", {}) if section else (f"{path}.image", {"obj": o})
            if not image and _controller_supplied(o):
                continue
            local = local_build(image)
            why = None if local else floating_reason(image, config)
            if local:
                # No registry holds it: it was built and loaded on the node. A pull fails; a moving tag stays on
                # each node as whichever build was loaded there last.
                if _pull_policy(c, image) == "Always":
                    yield Hit(f"{path}.imagePullPolicy" if c.get("imagePullPolicy") else f"{path}.image",
                              f"{o.kind} {o.name}: image {image} names no image a registry holds (Docker Hub "
                              "publishes no official image of that name: a build loaded on the node), and "
                              "imagePullPolicy Always makes the kubelet pull it: the container never starts "
                              "(ErrImagePull)", obj=o,
                              remediation="set imagePullPolicy: IfNotPresent (or Never) for an image loaded on the "
                                          "node, or push it to a registry and name that")
                elif _latest(image):
                    yield Hit(f"{path}.image", f"{o.kind} {o.name}: image {image} is a build loaded on the node under "
                              "the moving tag 'latest': each node keeps whichever build was loaded there last "
                              f"(imagePullPolicy {_pull_policy(c, image)} never replaces it), so pods run different "
                              "builds", obj=o, severity=Severity.WARNING,
                              remediation="tag each build with its version or commit and name that tag")
            elif why:
                repo, tag, _ = split(image)
                # A tag with no version on an image outside Docker's official ones: moving is the likely reading,
                # not a certain one (a walkthrough's own `myproject/trainer:mpi` may be one build).
                guess = bool(tag) and not official(repo) and why.startswith(f"tag {tag!r} names no version")
                yield Hit(key, f"{o.kind} {o.name}: image {image} is not pinned ({why}"
                          + (", assumed of this repository's tags: pin its digest or list it as pinned)" if guess
                             else ")"), severity=Severity.WARNING if guess else None, **where)
            elif c.get("imagePullPolicy", "IfNotPresent") != "IfNotPresent" and ctx.has_values:
                yield Hit(f"{path}.imagePullPolicy", f"{o.kind} {o.name}: pinned image {image} uses imagePullPolicy "
                          f"{c.get('imagePullPolicy')}; use IfNotPresent", obj=o)
            elif c.get("imagePullPolicy") == "Always" and image and not PLACEHOLDER.search(split(image)[1] or ""):
                yield Hit(f"{path}.imagePullPolicy", f"{o.kind} {o.name}: pinned image {image} uses imagePullPolicy "
                          f"Always: every start of container {c.get('name', i)} pulls from the registry for "
                          "the same build and fails where the registry is unreachable or rate-limited; use "
                          "IfNotPresent", severity=Severity.WARNING, obj=o)
            if ("headGroupSpec" in pod_path or "workerGroupSpecs" in pod_path) and field == "containers" and i == 0:
                # the Ray container is the first (KubeRay's RayContainerIndex); sidecars (Redis, log shippers)
                # run their own images
                ray_images.setdefault(f"{o.kind}/{o.name}", set()).add(_build(image))
    for o in ctx.objects:  # custom resources that name an image their operator runs, outside any pod template
        if _controller_supplied(o):
            for path, image in _image_fields(ctx, o):
                why = floating_reason(image, config)
                if why:
                    yield Hit(path, f"{o.kind} {o.name}: image {image} is not pinned ({why})", obj=o)
                    continue
                parent = path.rsplit(".", 1)[0]  # image fields lie under `spec`, so the path has a parent
                beside = node_at(o.obj, parent)
                if isinstance(beside, dict) and beside.get("imagePullPolicy") == "Always" and \
                        not PLACEHOLDER.search(split(image)[1] or ""):
                    yield Hit(f"{parent}.imagePullPolicy", f"{o.kind} {o.name}: pinned image {image} "
                              "uses imagePullPolicy Always: every pod its operator starts pulls from the registry "
                              "for the same build; use IfNotPresent", severity=Severity.WARNING, obj=o)
    for ref, images in ray_images.items():
        if len(images) > 1:
            kind, name = ref.split("/", 1)
            o = next(x for x in ctx.of_kind(kind) if x.name == name)
            yield Hit("spec", f"{kind} {name} runs different images on head and workers: "
                      f"{', '.join(sorted(images))}", obj=o)
