"""Where the files come from: the Hugging Face Hub (huggingface_hub, token from HF_TOKEN) or a local directory
holding a snapshot already (air-gapped clusters, tests). Both return the commit staged and, where the source
knows them, the sha256 every large (LFS) file must have."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import httpx2  # huggingface_hub's HTTP client: its connection errors are not OSErrors
from huggingface_hub import HfApi, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

COMMIT = re.compile(r"^[0-9a-f]{40}$")


class FetchError(Exception):
    """The source refused or failed: exit 2 with this line (never the token)."""


@dataclass(frozen=True)
class Fetched:
    commit: str | None  # the commit the files are from; None when a local source cannot say
    expected_sha256: dict[str, str]  # path -> sha256 the source publishes (LFS files)
    files: frozenset[str]  # every path the source has: anything else in the destination is left over


def from_hub(repo: str, revision: str, dest: Path, endpoint: str | None = None) -> Fetched:
    token = os.environ.get("HF_TOKEN") or None
    try:
        info = HfApi(endpoint=endpoint).model_info(repo, revision=revision, files_metadata=True, token=token)
        commit = info.sha
        expected = {s.rfilename: s.lfs.sha256 for s in (info.siblings or []) if s.lfs is not None}
        files = frozenset(s.rfilename for s in (info.siblings or []))
        snapshot_download(repo_id=repo, revision=commit, local_dir=dest, token=token, endpoint=endpoint)
    except GatedRepoError:
        raise FetchError(f"{repo}: gated; HF_TOKEN lacks access (accept the licence on the Hub)") from None
    except RepositoryNotFoundError:
        raise FetchError(f"{repo}: no such model repository (or HF_TOKEN lacks access)") from None
    except RevisionNotFoundError:
        raise FetchError(f"{repo}: revision {revision} not found") from None
    except (HfHubHTTPError, httpx2.HTTPError, OSError) as exc:
        raise FetchError(f"{repo}@{revision}: download failed: {type(exc).__name__}: {_first_line(exc)}") from None
    return Fetched(commit, expected, files)


def from_directory(source: Path, revision: str, dest: Path) -> Fetched:
    """Copy a local snapshot (e.g. from `hf download` on another machine). The revision is what the caller says
    the snapshot is; nothing here can confirm it, and the manifest records the source directory."""
    if not source.is_dir():
        raise FetchError(f"--from-dir {source}: no such directory")
    files = set()
    for p in sorted(source.rglob("*")):
        rel = p.relative_to(source)
        if rel.parts[0] == ".cache" or not p.is_file():
            continue
        target = dest / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, target)
        except OSError as exc:  # disk full, quota, permissions: one line naming the file, not a traceback
            raise FetchError(f"{target}: cannot write ({exc.strerror or exc}); NOT staged, no manifest "
                             "written") from None
        files.add(rel.as_posix())
    return Fetched(revision if COMMIT.match(revision) else None, {}, frozenset(files))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
