#!/usr/bin/env bash
# Create the miles tier's venv: radixark/miles' own PyPI release (miles-rl, which carries miles/, its Megatron-LM
# fork and SGLang) with CPU-runnable torch and the packages miles imports up to its first CUDA call.
#
# Usage: tests/miles/setup_miles_venv.sh [--refreeze]
#   MILES_VENV         venv path (default: `python3 -m tests.tier_venvs miles`, a per-machine cache outside the clone)
#   MILES_BASE_PYTHON  interpreter for the venv (default: python3; 3.11, the Python of the torch wheel here)
#   --refreeze         install from the top-level pins only and rewrite constraints.txt from `pip freeze`
#
# miles-rl is installed --no-deps: its requirements pull the CUDA stack (sglang-kernel, flash-attn, torchft) that
# neither installs nor runs on this machine. What the tier imports is listed below and pinned in constraints.txt.
# Idempotent: a marker holds a hash of this script and the constraints; a matching marker exits at once.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
VENV="${MILES_VENV:-$(cd "${ROOT}" && python3 -m tests.tier_venvs miles)}"
BASE_PY="${MILES_BASE_PYTHON:-python3}"
CONSTRAINTS="${HERE}/constraints.txt"
MARKER="${VENV}/.grpo-miles-installed"

TORCH_PIN="torch==2.13.0"     # the PyPI wheel (a CUDA build) runs on the CPU; the tier stops before any CUDA call
MILES_PIN="miles-rl==0.0.2"   # installed --no-deps (see above)
# What miles.utils.arguments, miles' Megatron fork, sglang.srt.server_args, miles.utils.data and
# miles.rollout.rm_hub import on the way to parse_args / Dataset / async_rm (found by importing them), and what miles'
# Prometheus collector imports (miles/utils/tracking_utils/prometheus_utils.py; ray[default] carries it in the image).
IMPORTED=(transformers torchvision aiohttp pyyaml omegaconf pybase64 pylatexenc sglang-router numpy packaging sympy
          requests psutil pydantic einops ipython ray pyarrow pillow httpx accelerate tqdm setproctitle pyzmq orjson
          msgspec partial-json-parser uvloop fastapi uvicorn pynvml openai dill sentencepiece six matplotlib
          prometheus_client)

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then REFREEZE=1; elif [[ $# -gt 0 ]]; then echo "usage: $0 [--refreeze]" >&2; exit 2; fi
start=${SECONDS}

fingerprint() {
  { cat "$0" "${CONSTRAINTS}" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
}
if [[ ${REFREEZE} -eq 0 && -x "${VENV}/bin/python" && -f "${MARKER}" && "$(cat "${MARKER}")" == "$(fingerprint)" ]]; then
  echo "miles venv ${VENV} is up to date; elapsed $((SECONDS - start)) s"
  exit 0
fi

rm -f "${MARKER}"
[[ -x "${VENV}/bin/python" ]] || "${BASE_PY}" -m venv "${VENV}"
PY="${VENV}/bin/python"

CARGS=()
if [[ ${REFREEZE} -eq 0 ]]; then
  [[ -f "${CONSTRAINTS}" ]] || { echo "missing ${CONSTRAINTS}; run with --refreeze" >&2; exit 1; }
  CARGS=("--constraint=${CONSTRAINTS}")
fi
pip_install() {
  # This machine's pip config names index folders that do not exist; drop that noise, keep real errors.
  "${PY}" -m pip install --disable-pip-version-check -q "${CARGS[@]}" "$@" 2> >(
    grep -v "is ignored: it is neither a file nor a directory" >&2
  )
}

pip_install "${TORCH_PIN}"
pip_install "${TORCH_PIN}" "${IMPORTED[@]}"
pip_install --no-deps "${MILES_PIN}"

"${PY}" - <<'PY'
import warnings
warnings.filterwarnings("ignore")
import miles.utils.arguments, miles.utils.data, miles.rollout.rm_hub  # noqa: F401,E401
import megatron.training.arguments, sglang.srt.server_args  # noqa: F401,E401
from importlib.metadata import version
print(f"miles-rl {version('miles-rl')}, torch {version('torch')}")
PY

if [[ ${REFREEZE} -eq 1 ]]; then
  "${PY}" -m pip freeze --exclude-editable >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS} ($(wc -l <"${CONSTRAINTS}") pins)"
fi
fingerprint >"${MARKER}"
echo "miles venv ready at ${VENV}; elapsed $((SECONDS - start)) s"
