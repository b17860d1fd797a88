"""Writing prepared files (verl parquet by suffix .parquet, miles JSONL by .jsonl) and their manifest."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..digest import sha256_file
from .errors import DataInputError
from .example import Example, miles_row, verl_row

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
SUFFIXES = (".parquet", ".jsonl")


def check_output(path: Path) -> None:
    """Before any work: the suffix names a layout and the directory can be created and written."""
    if path.suffix not in SUFFIXES:
        raise DataInputError(f"{path}: output must end in .parquet (verl) or .jsonl (miles)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".grpo-data-probe-"):
            pass
    except OSError as exc:
        raise DataInputError(f"{path}: output directory is not writable ({exc.strerror or exc})") from None
    if path.is_dir():
        raise DataInputError(f"{path}: is a directory")


def write(examples: list[Example], path: Path) -> dict[str, Any]:
    tmp = path.with_name(f".{path.name}.partial")
    try:
        if path.suffix == ".parquet":
            table = pa.Table.from_pylist([verl_row(e, i) for i, e in enumerate(examples)], schema=VERL_SCHEMA)
            pq.write_table(table, tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                for i, e in enumerate(examples):
                    f.write(json.dumps(miles_row(e, i), ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DataInputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return {"path": str(path), "rows": len(examples), "size": path.stat().st_size, "sha256": sha256_file(path)}


def manifest_path(output: Path) -> Path:
    return output.with_name(output.name + ".manifest.json")


def write_manifest(output: Path, body: dict[str, Any]) -> Path:
    mpath = manifest_path(output)
    mpath.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return mpath
