"""Reading a source: a local snapshot of the dataset repository (tests, air-gapped clusters) or the Hub at the
pinned revision. Both end in the same `datasets.load_dataset("parquet" | "json", data_files=...)` call on the
source's own data files (parquet, or JSON lines where a repository has no parquet at a commit), so the rows the
tests check are read exactly as the cluster reads them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import httpx2  # huggingface_hub's HTTP client: its connection errors are not OSErrors
import huggingface_hub
import pyarrow.parquet as pq
from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

from ..digest import sha256_file
from .adapters.base import COMMIT, Adapter
from .errors import DataInputError


@dataclass(frozen=True)
class Loaded:
    adapter: Adapter
    split: str
    revision: str  # what was asked for: a commit, or the branch name when --allow-mutable let it through
    mutable: bool
    commit: str | None  # the commit read; None for a local copy of a branch (nothing here can tell)
    files: list[dict[str, Any]]  # {path (inside the repository), size, sha256}
    rows: list[dict[str, Any]]


def resolve_revision(adapter: Adapter, override: str | None, allow_mutable: bool) -> tuple[str, bool]:
    revision = override or adapter.revision
    if COMMIT.match(revision):
        return revision, False
    if not allow_mutable:
        raise DataInputError(
            f"{adapter.name}: revision {revision!r} is a branch, not a commit; pin it with "
            f"--revision {adapter.name}=<40-hex commit> (or pass --allow-mutable to record it as mutable)"
        )
    return revision, True


def snapshot(adapter: Adapter, split: str, revision: str, cache: Path,
             endpoint: str | None = None) -> tuple[Path, str]:
    """Download the split's parquet files at `revision` (HF_TOKEN from the environment): (directory, commit)."""
    token = os.environ.get("HF_TOKEN") or None
    try:
        commit = huggingface_hub.HfApi(endpoint=endpoint).dataset_info(adapter.repo, revision=revision, token=token).sha
        local = cache / adapter.repo.replace("/", "__") / commit
        huggingface_hub.snapshot_download(
            repo_id=adapter.repo, repo_type="dataset", revision=commit, local_dir=local,
            allow_patterns=[adapter.splits[split]], token=token, endpoint=endpoint,
        )
    except RevisionNotFoundError:
        raise DataInputError(f"{adapter.name}: revision {revision} not found in {adapter.repo}") from None
    except (HfHubHTTPError, httpx2.HTTPError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise DataInputError(
            f"{adapter.name}: download of {adapter.repo}@{revision} failed: {type(exc).__name__}: {first}"
        ) from None
    return local, commit


def _count_rows(adapter: Adapter, path: Path) -> int:
    """Rows in one data file, read cheaply before `datasets` parses it: a parquet footer or non-blank lines."""
    if path.suffix == ".jsonl":
        with path.open("rb") as f:
            head = f.read(1).lstrip()
            if head and head != b"{":
                raise DataInputError(f"{adapter.name}: {path}: not a JSON-lines file (first byte {head!r})")
            f.seek(0)
            return sum(1 for line in f if line.strip())
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception as exc:  # ArrowInvalid and friends: not a parquet file
        raise DataInputError(f"{adapter.name}: {path}: not a parquet file ({exc})") from None


def load(adapter: Adapter, split: str, revision: str, mutable: bool, source_dir: Path, cache: Path,
         commit: str | None = None) -> Loaded:
    """Rows of one split from a directory holding the repository's files at `revision`."""
    if split not in adapter.splits:
        raise DataInputError(
            f"{adapter.name}: no {split!r} split (has: {', '.join(sorted(adapter.splits))})"
        )
    pattern = adapter.splits[split]
    matched = sorted(p for p in source_dir.glob(pattern) if p.is_file())
    if not matched:
        raise DataInputError(f"{adapter.name}: no files match {pattern} under {source_dir}")
    rows = sum(_count_rows(adapter, p) for p in matched)
    if rows == 0:
        raise DataInputError(f"{adapter.name} ({split}): empty dataset: {pattern} under {source_dir} has 0 rows")
    # datasets logs a parse failure (a truncated JSON line) on its own before raising it; the raise becomes
    # the one-line error below, so its log line would only be a second, noisier copy.
    datasets.utils.logging.set_verbosity(datasets.utils.logging.CRITICAL)
    try:
        # The packaged builder, not the directory: a repository copy that still holds its loading script
        # (apps.py beside APPS' JSON lines) makes `load_dataset(<dir>)` refuse to run at all.
        ds = datasets.load_dataset(
            "json" if pattern.endswith(".jsonl") else "parquet", data_files={split: [str(p) for p in matched]},
            split=split, cache_dir=str(cache / "datasets"),
        )
    except Exception as exc:  # datasets raises many types for unreadable parquet; all are bad input here
        root = exc
        while root.__cause__ is not None or root.__context__ is not None:  # datasets wraps the parser's error
            root = root.__cause__ or root.__context__
        why = str(exc) if root is exc else f"{exc}: {root}"
        raise DataInputError(f"{adapter.name}: cannot read {pattern} under {source_dir}: {why}") from None
    missing = [c for c in adapter.columns if c not in ds.column_names]
    if missing:
        raise DataInputError(
            f"{adapter.name}: {source_dir}/{pattern} lacks column(s) {', '.join(missing)} "
            f"(has: {', '.join(ds.column_names)}); is this {adapter.repo}?"
        )
    rows = [dict(r, _row=i) for i, r in enumerate(ds)]
    files = [{"path": str(p.relative_to(source_dir)), "size": p.stat().st_size, "sha256": sha256_file(p)}
             for p in matched]
    if commit is None and COMMIT.match(revision):
        commit = revision
    return Loaded(adapter, split, revision, mutable, commit, files, rows)


