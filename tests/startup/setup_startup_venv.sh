#!/usr/bin/env bash
# Create the start-up tier's venv from images/verl/requirements.txt (the image's own pins), with CPU builds.
#
# Usage: tests/startup/setup_startup_venv.sh [--refreeze]
#   STARTUP_VENV         venv path (default: <repo>/.venv-startup)
#   STARTUP_BASE_PYTHON  interpreter for the venv (default: python3; 3.11, the Python of the CPU torch wheel here)
#   --refreeze           rewrite tests/startup/constraints.txt from `pip freeze` after installing
#
# Every pin of the image is installed at the image's version except the deviations below, each listed with its
# reason in images/README.md (tests/startup/test_pins.py checks both lists agree and what got installed).
# Idempotent: a marker holds a hash of the inputs; a matching marker exits at once.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
VENV="${STARTUP_VENV:-${ROOT}/.venv-startup}"
BASE_PY="${STARTUP_BASE_PYTHON:-python3}"
REQUIREMENTS="${ROOT}/images/verl/requirements.txt"
CONSTRAINTS="${HERE}/constraints.txt"
MARKER="${VENV}/.grpo-startup-installed"

# Deviations from images/verl/requirements.txt (name -> how the start-up venv installs it instead).
CPU_TORCH="torch==2.13.0"                 # image: torch 2.11.0 CUDA from the vLLM base
NO_DEPS=(vllm)                            # vllm pins torch==2.11.0 (CUDA): installed without deps, its other deps added
IGNORE_PYTHON=(megatron-core megatron-bridge)  # both declare Python >= 3.12; the CPU torch wheel here is 3.11
TE_CPU_PARTS=(transformer-engine transformer-engine-cu12)  # transformer-engine-torch is an sdist that needs nvcc

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then REFREEZE=1; elif [[ $# -gt 0 ]]; then echo "usage: $0 [--refreeze]" >&2; exit 2; fi
start=${SECONDS}

fingerprint() {
  { cat "$0" "${REQUIREMENTS}" "${CONSTRAINTS}"; } | sha256sum | cut -d' ' -f1
}
if [[ ${REFREEZE} -eq 0 && -x "${VENV}/bin/python" && -f "${MARKER}" && "$(cat "${MARKER}")" == "$(fingerprint)" ]]; then
  echo "start-up venv ${VENV} is up to date; elapsed $((SECONDS - start)) s"
  exit 0
fi

pin_of() {  # pin_of NAME -> the requirement line for NAME (extras kept), from the image's requirements
  grep -i -E "^$1(\[[^]]*\])?==" "${REQUIREMENTS}" | head -1
}
version_of() { pin_of "$1" | sed -E 's/.*==//'; }
in_list() { local x="$1"; shift; local y; for y in "$@"; do [[ "${y,,}" == "${x,,}" ]] && return 0; done; return 1; }

REGULAR=()
while IFS= read -r line; do
  line="${line%%#*}"; line="${line// /}"
  [[ -z "${line}" ]] && continue
  name="$(sed -E 's/(\[|==).*//' <<<"${line}")"
  if [[ "${name,,}" == torch ]] || in_list "${name}" "${NO_DEPS[@]}" "${IGNORE_PYTHON[@]}" || [[ "${name,,}" == transformer-engine ]]; then
    continue
  fi
  REGULAR+=("${line}")
done <"${REQUIREMENTS}"

rm -f "${MARKER}"
[[ -x "${VENV}/bin/python" ]] || "${BASE_PY}" -m venv "${VENV}"
PY="${VENV}/bin/python"

pip_install() {
  # This machine's pip config names index folders that do not exist; drop that noise, keep real errors.
  "${PY}" -m pip install --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

pip_install "${CPU_TORCH}"
pip_install --constraint="${CONSTRAINTS}" "${CPU_TORCH}" "${REGULAR[@]}"
for name in "${NO_DEPS[@]}"; do
  pip_install --no-deps "$(pin_of "${name}")"
  # The package's own dependencies, except torch and its companions (already the CPU build).
  mapfile -t deps < <("${PY}" - "${name}" <<'EOF'
import sys
from importlib.metadata import requires
from packaging.requirements import Requirement
for line in requires(sys.argv[1]) or []:
    req = Requirement(line)
    if req.name.lower() in {"torch", "torchvision", "torchaudio"}:
        continue
    if req.marker is None or req.marker.evaluate({"extra": ""}):
        print(str(req).split(";")[0])
EOF
)
  pip_install --constraint="${CONSTRAINTS}" "${deps[@]}"
done
ignore=()
for name in "${IGNORE_PYTHON[@]}"; do ignore+=("$(pin_of "${name}")"); done
te_version="$(version_of transformer-engine)"
pip_install --no-deps --ignore-requires-python "${ignore[@]}" \
  "${TE_CPU_PARTS[0]}==${te_version}" "${TE_CPU_PARTS[1]}==${te_version}"

"${PY}" - <<'EOF'
import warnings
warnings.filterwarnings("ignore")
import importlib.util
import ray, torch, verl, vllm  # noqa: F401,E401
from verl.trainer.main_ppo import main  # noqa: F401 -- hydra, tensordict, transformers
for name in ("megatron.core", "megatron.bridge", "transformer_engine", "transfer_queue"):
    assert importlib.util.find_spec(name.split(".")[0]) is not None, f"{name} not installed"
print(f"torch {torch.__version__}, verl {verl.__version__}, vllm {vllm.__version__}, ray {ray.__version__}")
EOF

if [[ ${REFREEZE} -eq 1 ]]; then
  "${PY}" -m pip freeze --exclude-editable | sed -E 's/^torch==2\.13\.0\+cpu$/torch==2.13.0/' \
    | grep -v -i -E '^(vllm|megatron-core|megatron-bridge|transformer-engine|transformer_engine|verl)(==|\[)' >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS}"
fi
fingerprint >"${MARKER}"
echo "start-up venv ready at ${VENV}; elapsed $((SECONDS - start)) s"
