"""Import each named module; classify the outcome. Runs in the start-up venv; prints one JSON line.

    python import_probe.py MODULE [MODULE ...]

Verdicts: "imported"; "cuda-library" (the package is present and failed only while loading a CUDA shared
library, which a machine without a GPU driver cannot provide); "missing" (find_spec found no such top-level
package); "error" (anything else: an ImportError between packages, a Python-version syntax error, ...).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import traceback
import warnings

# Messages of a shared-library load that needs the CUDA driver/toolkit, as ctypes, torch and TE word them.
CUDA_LIBRARY = re.compile(
    r"(lib(cuda|cudart|cublas|cublasLt|cudnn|nccl|nvrtc|nvToolsExt|nvJitLink|cusparse|cufft|curand|cusolver|"
    r"transformer_engine|c10_cuda|torch_cuda)[\w.\-]*\.so"
    r"|(cudnn|cublas|cudart|nccl|nvrtc)\w* shared object not found|Could not find shared object file"
    r"|CUDA driver|libnvidia|No CUDA runtime|cuda.*not found|nvidia-smi)",
    re.IGNORECASE,
)


def probe(name: str) -> dict:
    top = name.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        spec, why = None, repr(exc)
    else:
        why = "find_spec returned None"
    if spec is None:
        return {"verdict": "missing", "detail": why}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001 -- every ending is classified and reported
        text = "".join(traceback.format_exception(exc))
        chain = [exc]
        while chain[-1].__cause__ or chain[-1].__context__:
            chain.append(chain[-1].__cause__ or chain[-1].__context__)
        cuda = any(isinstance(e, OSError | RuntimeError | ImportError) and CUDA_LIBRARY.search(str(e))
                   for e in chain)
        return {"verdict": "cuda-library" if cuda else "error",
                "detail": f"{type(exc).__name__}: {str(exc)[:800]}", "traceback_tail": text[-1500:]}
    return {"verdict": "imported"}


def main(names: list[str]) -> int:
    results = {name: probe(name) for name in names}
    sys.stdout.flush()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
