"""Structural check of one .safetensors file: the header parses and every tensor's byte range lies inside the
data section, matches its dtype x shape, and the ranges tile the section exactly (the format allows no holes).
A truncated download fails here; the safetensors library then opens the file as the trainer will."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from safetensors import safe_open  # a hard dependency: without it nothing is verified, so nothing may pass

MAX_HEADER = 100 * 1024 * 1024  # the library's own limit
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}


def check(path: Path) -> tuple[list[str], set[str]]:
    """(problems, tensor names). No problems means the file is structurally whole."""
    size = path.stat().st_size
    if size < 8:
        return [f"{size} bytes: shorter than the 8-byte header length (truncated)"], set()
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n > MAX_HEADER:
            return [f"header length {n} is implausible (corrupt)"], set()
        if 8 + n > size:
            return [f"header of {n} bytes runs past the end of the {size}-byte file (truncated)"], set()
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [f"header is not JSON ({exc})"], set()
    except RecursionError:
        return ["header is not a safetensors header (JSON nested too deeply)"], set()
    if not isinstance(header, dict):
        return ["header is not a JSON object"], set()
    data_len = size - 8 - n
    problems: list[str] = []
    ranges: list[tuple[int, int, str]] = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
            if not all(isinstance(x, int) and x >= 0 for x in (*shape, begin, end)) or end < begin:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            problems.append(f"tensor {name}: malformed entry {info!r:.120}")
            continue
        if end > data_len:
            problems.append(f"tensor {name}: bytes {begin}..{end} beyond the {data_len}-byte data section "
                            "(truncated)")
            continue
        if dtype in DTYPE_BYTES and end - begin != math.prod(shape) * DTYPE_BYTES[dtype]:
            problems.append(f"tensor {name}: {end - begin} bytes for {dtype}{shape} "
                            f"(expected {math.prod(shape) * DTYPE_BYTES[dtype]})")
        ranges.append((begin, end, name))
    if not problems:
        at = 0
        for begin, end, name in sorted(ranges):
            if begin != at:
                problems.append(f"tensor {name}: starts at {begin}, expected {at} (hole or overlap)")
                break
            at = end
        else:
            if at != data_len:
                problems.append(f"{data_len - at} bytes after the last tensor (corrupt or wrong file)")
    if not problems:
        try:
            with safe_open(str(path), framework="numpy") as st:
                st.keys()
        except Exception as exc:  # the library's SafetensorError and OSError alike: the trainer would fail too
            problems.append(f"safetensors cannot open it ({exc})")
    names = {r[2] for r in ranges}
    return problems, names
