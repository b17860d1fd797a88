"""Reading an input file with grpo-lint's bounds (a regular file, UTF-8, at most MAX_BYTES) and noting what was
read, without loading a YAML parser: the lint cache answers a warm run with this alone (safeyaml parses)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError

MAX_BYTES = 5 * 1024 * 1024  # the largest shipped values file is 2 KB; rendered releases are ~100 KB

_ledger: dict[str, set[str]] | None = None  # absolute path -> sha256 of each content read there
_ledger_lock = threading.Lock()  # a module global, not a context variable: reads in worker threads count too


@contextmanager
def ledger() -> Iterator[dict[str, set[str]]]:
    """Record every `read_text` while inside: absolute path -> the sha256 of each distinct content it returned
    (two digests for one path: the file changed between two reads of one run)."""
    global _ledger
    with _ledger_lock:
        outer, _ledger = _ledger, {}
        mine = _ledger
    try:
        yield mine
    finally:
        with _ledger_lock:
            _ledger = outer


def _note_read(name: str, raw: bytes) -> None:
    with _ledger_lock:
        if _ledger is not None:
            _ledger.setdefault(os.path.abspath(name), set()).add(hashlib.sha256(raw).hexdigest())


def read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes`; anything else is an InputError."""
    name = str(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused just below.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(name, "is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise InputError(name, f"not a regular file ({_file_kind(mode)}); give a YAML file")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise InputError(name, f"larger than {max_bytes // (1024 * 1024)} MiB; not a values or manifest file")
    raw = b"".join(chunks)
    if b"\0" in raw:
        raise InputError(name, "binary data (NUL byte); not a YAML file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text (byte {exc.start})") from None
    _note_read(name, raw)
    return text


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a plain file"
