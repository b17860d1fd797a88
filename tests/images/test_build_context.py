"""What enters each image's build context, computed by Docker's own `.dockerignore` matcher.

Every image is built from the repository root (`docker build -f images/<name>/Dockerfile .`), so the root
`.dockerignore` decides what the daemon receives. There is no Docker engine here: the check uses the matcher
docker-py hands the engine's context tarball to (`docker.utils.build.exclude_paths`, the same pattern semantics
as the CLI's `moby/patternmatcher`: `**`, negation, leading `/`). Where it stops: BuildKit's per-Dockerfile
`<Dockerfile>.dockerignore` is not consulted (no image has one).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from docker.utils.build import exclude_paths

from tests.conftest import REPO_ROOT

IMAGES = REPO_ROOT / "images"
DOCKERFILES = sorted(IMAGES.glob("*/Dockerfile"))
# Secret-shaped files a user keeps near a checkout, by the names the tools that write them use.
SECRET_SHAPED = [
    "env_vars", "hf_token.txt", ".hf_token", ".env", "prod.env", ".aws/credentials", ".aws/config", "kubeconfig",
    "kubeconfig-prod.yaml", ".kube/config", "id_rsa", "id_ed25519.pub", ".ssh/known_hosts", ".netrc",
    ".huggingface/token", ".cache/huggingface/token", "server.pem", "tls.key", ".git-credentials",
    ".docker/config.json", "gcp-credentials.json", "wandb_token", "reward-secrets.yaml",
    # the seed's (000) list of what the predecessor's ignore file let through while an image copies values/ whole
    ".env.local", ".env.production", ".envrc", "secrets.json", "secrets.env", "secrets.yml", "secrets.toml",
    "gcp-service-account.json", "my-project-service-account-key.json", ".npmrc", ".pypirc",
]
# Where they end up: the root, an image directory, inside a copied source tree.
PLACES = ["", "images/verl/", "tools/grpo_stack/", "charts/grpo-stack/", "values/"]


def _patterns() -> list[str]:
    lines = (REPO_ROOT / ".dockerignore").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _context(root) -> set[str]:
    return set(exclude_paths(str(root), _patterns()))


def test_every_image_builds_from_the_repository_root():
    """One context, one .dockerignore: a Dockerfile whose COPY sources are not repository paths would be built
    from another directory, where the root .dockerignore does not apply."""
    for dockerfile in DOCKERFILES:
        for source in _copy_sources(dockerfile):
            assert (REPO_ROOT / source).exists(), f"{dockerfile.relative_to(REPO_ROOT)}: COPY {source} is not a path " \
                "from the repository root"


@pytest.mark.parametrize("place", PLACES, ids=lambda p: p or "root")
def test_secret_shaped_files_never_enter_the_context(tmp_path, place):
    """The seed's `env_vars` and every other shape, at every depth, are excluded."""
    shutil.copy(REPO_ROOT / ".dockerignore", tmp_path / ".dockerignore")
    (tmp_path / "images/verl").mkdir(parents=True)
    (tmp_path / "images/verl/Dockerfile").write_text("FROM scratch\n")
    (tmp_path / "tools/grpo_stack").mkdir(parents=True)
    (tmp_path / "tools/grpo_stack/kept.py").write_text("")
    for name in SECRET_SHAPED:
        path = tmp_path / place / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret\n")
    included = _context(tmp_path)
    leaked = sorted(f"{place}{n}" for n in SECRET_SHAPED if f"{place}{n}" in included)
    assert not leaked, f"secret-shaped files in the build context: {leaked}"
    assert "tools/grpo_stack/kept.py" in included and "images/verl/Dockerfile" in included  # the matcher works


def test_everything_the_dockerfiles_copy_is_in_the_context():
    """The exclusions never drop a file an image needs: every tracked file under each COPY source is sent."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    included = _context(REPO_ROOT)
    for dockerfile in DOCKERFILES:
        for source in _copy_sources(dockerfile):
            wanted = [f for f in tracked if f == source or f.startswith(source.rstrip("/") + "/")]
            assert wanted, f"{dockerfile.relative_to(REPO_ROOT)}: COPY {source} matches no tracked file"
            missing = [f for f in wanted if f not in included]
            assert not missing, f"{dockerfile.relative_to(REPO_ROOT)}: excluded from the context: {missing[:5]}"


def _copy_sources(dockerfile) -> list[str]:
    """The context paths of each `COPY`/`ADD` without `--from` (a stage, not the context)."""
    out = []
    for line in dockerfile.read_text().splitlines():
        m = re.match(r"^\s*(COPY|ADD)\s+(.*)$", line, re.IGNORECASE)
        if not m or "--from=" in m.group(2):
            continue
        words = [w for w in m.group(2).split() if not w.startswith("--")]
        out += words[:-1]
    return out
