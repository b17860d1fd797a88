"""Writing prepared files (verl parquet by suffix .parquet, miles JSONL by .jsonl) and their manifest.

Each output is claimed for the whole run (`claimed`: an exclusive flock on `.<name>.lock` beside it), so a second
`grpo-data` writing the same file is refused at once instead of interleaving with the first; every file is written
to a temporary file of its own and renamed into place, and the manifest records the sha256 of the bytes written.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..digest import sha256_file
from .errors import DataInputError
from .example import Example, layout_for, miles_row, possessive, suffix_for, verl_row

# Fixed schema: every row has the same struct fields whatever its source, so files mix and concatenate.
VERL_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.struct([
        ("split", pa.string()), ("index", pa.int64()), ("source", pa.string()), ("source_id", pa.string()),
        ("problem", pa.string()), ("pass_rate", pa.float64()), ("metadata", pa.string()),
    ])),
])


def check_output(path: Path, framework: str | None = None) -> None:
    """Before any work: the suffix names a layout (the run's framework's, when it is given) and the directory can be
    created and written."""
    layout = layout_for(path.name)
    if layout is None:
        raise DataInputError(f"{path}: output must end in .parquet (verl) or .jsonl (miles)")
    if framework is not None and layout != framework:
        raise DataInputError(
            f"{path}: grpo-data writes {possessive(layout)} layout to a {path.suffix} file, and {framework} would read "
            f"none of its labels; for a {framework} run write {path.with_suffix(suffix_for(framework))}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".grpo-data-probe-"):
            pass
    except OSError as exc:
        raise DataInputError(f"{path}: output directory is not writable ({exc.strerror or exc})") from None
    if path.is_dir():
        raise DataInputError(f"{path}: is a directory")


@contextmanager
def claimed(outputs: list[Path], inputs: list[Path]) -> Iterator[None]:
    """Hold every output for the run; refuse an output that is also an input, named twice, or being written by
    another grpo-data now."""
    seen: dict[Path, Path] = {}
    for out in outputs:
        where = out.resolve()
        if where in seen:
            raise DataInputError(f"--output {out}: given twice (also as {seen[where]})")
        seen[where] = out
        for source in inputs:
            same = source.resolve() == where or (source.exists() and where.exists() and os.path.samefile(source, where))
            if same:
                raise DataInputError(f"--output {out}: is also an input ({source}); write to another file")
    with ExitStack() as held:
        for out in outputs:
            held.enter_context(_lock(out))
        yield


@contextmanager
def _lock(out: Path) -> Iterator[None]:
    lock = out.with_name(f".{out.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()  # empty until the holder wrote it
            who = f"another grpo-data ({holder})" if holder.startswith("pid ") else "another grpo-data"
            raise DataInputError(f"--output {out}: {who} is writing it now; wait for it to finish or choose "
                                 "another --output") from None
        os.pwrite(fd, f"pid {os.getpid():<24}".encode(), 0)  # fixed width: a reader never sees half of two pids
        yield
    finally:
        os.close(fd)  # releases the lock; the lock file stays (removing it would race a third writer)


def _publish(path: Path, fill) -> tuple[str, int]:
    """Write through `fill(tmp_path)` into a temporary file of this process beside `path`, rename it into place;
    the sha256 and size of what was written."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    os.close(fd)
    tmp = Path(name)
    try:
        fill(tmp)
        digest, size = sha256_file(tmp), tmp.stat().st_size
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DataInputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return digest, size


def write(examples: list[Example], path: Path) -> dict[str, Any]:
    def fill(tmp: Path) -> None:
        if path.suffix == ".parquet":
            table = pa.Table.from_pylist([verl_row(e, i) for i, e in enumerate(examples)], schema=VERL_SCHEMA)
            pq.write_table(table, tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                for i, e in enumerate(examples):
                    f.write(json.dumps(miles_row(e, i), ensure_ascii=False, sort_keys=True) + "\n")

    digest, size = _publish(path, fill)
    return {"path": str(path), "rows": len(examples), "size": size, "sha256": digest}


def manifest_path(output: Path) -> Path:
    return output.with_name(output.name + ".manifest.json")


def write_manifest(output: Path, body: dict[str, Any]) -> Path:
    mpath = manifest_path(output)
    text = json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    _publish(mpath, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return mpath
