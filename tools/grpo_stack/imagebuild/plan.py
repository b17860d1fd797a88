"""Which images a release's values select, where each is pushed, and the build arguments each Dockerfile needs.

Only images this repository builds (images/*) are planned; the upstream images a release may run (vLLM,
SandboxFusion) are named in `upstream` and left as the values pin them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog.images import IMAGES

# images/<name> -> (values section holding `image`, the component switch that deploys it).
BUILT: dict[str, tuple[str, str]] = {
    "reward-service": ("reward-service", "rewardService"),
    "fsx-utils": ("fsx-utils", "fsxUtils"),
    "lm-eval": ("lm-eval", "lmEval"),
}
UPSTREAM: dict[str, str] = {"vllm": "vllm", "sandbox-fusion": "sandboxFusion"}
ARG = re.compile(r"^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)(=.*)?\s*$", re.IGNORECASE)
# Where a required build argument's value comes from, said when it is missing.
ARG_HELP = {
    "EFA_INSTALLER_VERSION": "the EFA installer release your node AMI's kernel module matches (images/README.md)",
    "EFA_INSTALLER_SHA256": "the SHA-256 of that installer tarball, from its release notes (images/README.md)",
}


class PlanError(Exception):
    """The values or the arguments cannot be built from (exit 2)."""


@dataclass(frozen=True)
class ImageBuild:
    name: str  # images/<name>
    values_key: str  # e.g. raycluster.image
    dockerfile: str  # relative to the repository root (the build context)
    repository: str  # where it is pushed
    tag: str
    build_args: dict[str, str] = field(default_factory=dict)
    framework_build: str | None = None  # the catalogued build of a Ray image (raycluster.image.build)
    note: str = ""

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"


def required_args(dockerfile: Path) -> list[str]:
    """The ARGs a Dockerfile declares without a default: the build fails (or builds the wrong thing) without them."""
    out = []
    for line in dockerfile.read_text().splitlines():
        m = ARG.match(line)
        if m and not m.group(2):
            out.append(m.group(1))
    return list(dict.fromkeys(out))


def _get(merged: dict[str, Any], dotted: str) -> Any:
    node: Any = merged
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _target(registry: str, repository: str) -> str:
    """registry + the repository's path without any registry host it names (`grpo-stack/verl`)."""
    first, _, rest = repository.partition("/")
    path = rest if rest and ("." in first or ":" in first or first == "localhost") else repository
    return f"{registry.rstrip('/')}/{path}"


def plan(merged: dict[str, Any], registry: str, build_args: dict[str, str], root: Path) -> list[ImageBuild]:
    """The builds for merged values (chart defaults included), in the order they are built. Raises PlanError
    when a selected Dockerfile's required build argument is not given."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*(:\d+)?(/[a-z0-9._-]+)*", registry):
        raise PlanError(f"--registry {registry!r} is not a registry host with an optional path "
                        "(e.g. 123456789012.dkr.ecr.us-west-2.amazonaws.com or ghcr.io/my-org)")
    comps = _get(merged, "global.components") or {}
    out: list[ImageBuild] = []
    if comps.get("raycluster"):
        framework = _get(merged, "global.job.framework")
        image = IMAGES.get(framework) if isinstance(framework, str) else None
        if image is None:
            raise PlanError(f"global.job.framework: {framework!r} has no image in images/ (verl or miles)")
        tag = _get(merged, "raycluster.image.tag") or image.tag
        out.append(ImageBuild(image.framework, "raycluster.image", image.dockerfile,
                              _target(registry, _get(merged, "raycluster.image.repository") or image.repository),
                              tag, framework_build=image.tag,
                              note=f"{image.framework} {image.version}, Ray {image.ray_version}"))
    for name, (section, switch) in BUILT.items():
        if comps.get(switch):
            repo = _get(merged, f"{section}.image.repository") or f"grpo-stack/{name}"
            out.append(ImageBuild(name, f"{section}.image", f"images/{name}/Dockerfile", _target(registry, repo),
                                  str(_get(merged, f"{section}.image.tag"))))
    missing: dict[str, list[str]] = {}
    done = []
    for b in out:
        need = required_args(root / b.dockerfile)
        for arg in need:
            if arg not in build_args:
                missing.setdefault(arg, []).append(b.name)
        done.append(ImageBuild(b.name, b.values_key, b.dockerfile, b.repository, b.tag,
                               {k: build_args[k] for k in need if k in build_args}, b.framework_build, b.note))
    if missing:
        lines = [f"--build-arg {arg}=... (needed by {', '.join(names)}: {ARG_HELP.get(arg, 'see its Dockerfile')})"
                 for arg, names in missing.items()]
        raise PlanError("missing required build arguments:\n  " + "\n  ".join(lines))
    return done


def upstream(merged: dict[str, Any]) -> list[str]:
    """Images the values select that are not built here: `section.image (repository)`."""
    comps = _get(merged, "global.components") or {}
    return [f"{section}.image ({_get(merged, f'{section}.image.repository')})"
            for section, switch in UPSTREAM.items() if comps.get(switch)]
