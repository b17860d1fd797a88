#!/usr/bin/env bash
# Create the differential-test oracle venv: CPU torch + verl + megatron-core, all pinned.
#
# Usage: tests/oracle/setup_oracle_venv.sh [--refreeze]
#   ORACLE_VENV          venv path (default: `python3 -m tests.tier_venvs oracle`, a per-machine cache outside
#                        the clone keyed by this script and constraints.txt)
#   ORACLE_BASE_PYTHON   interpreter used to create the venv (default: python3; must be 3.11 for megatron-core 0.16.1)
#   --refreeze           install from the top-level pins only and rewrite constraints.txt from `pip freeze`
#
# Idempotent: a marker file records the hash of the pins; a matching marker skips the install.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
VENV="${ORACLE_VENV:-$(cd "${ROOT}" && python3 -m tests.tier_venvs oracle)}"
BASE_PY="${ORACLE_BASE_PYTHON:-python3}"
CONSTRAINTS="${HERE}/constraints.txt"
MARKER="${VENV}/.grpo-oracle-installed"

TORCH_PIN="torch==2.13.0"
ORACLE_PINS=("verl==0.9.1" "megatron-core==0.16.1")

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then
  REFREEZE=1
elif [[ $# -gt 0 ]]; then
  echo "usage: $0 [--refreeze]" >&2
  exit 2
fi

start=${SECONDS}

# One build at a time per venv: clones, worktrees and CI on one machine share it.
mkdir -p "$(dirname "${VENV}")"
exec 9>"${VENV}.lock"
flock 9

pins_fingerprint() {
  # The marker is valid only for this exact set of pins and this constraints file.
  { echo "${TORCH_PIN} ${ORACLE_PINS[*]}"; cat "${CONSTRAINTS}" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
}

already_installed() {
  [[ -x "${VENV}/bin/python" && -f "${MARKER}" ]] && [[ "$(cat "${MARKER}")" == "$(pins_fingerprint)" ]]
}


refreeze() {
  # A local version (+cpu, +cu130) is dropped: the public version is what PyPI serves.
  "${VENV}/bin/python" -m pip freeze --exclude-editable \
    | sed -E 's/^(torch==[0-9.]+)\+[a-z0-9]+$/\1/' >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS} ($(wc -l <"${CONSTRAINTS}") pins)"
}

smoke_import() {
  "${VENV}/bin/python" - <<'EOF'
import warnings
warnings.filterwarnings("ignore")  # megatron-core warns that Transformer Engine / Apex are absent (expected on CPU)
import torch, verl, megatron.core
from verl.utils.config import validate_config  # noqa: F401 -- pulls in hydra, tensordict, transformers
print(f"torch {torch.__version__}, verl {verl.__version__}, megatron-core {megatron.core.__version__}")
EOF
}

if [[ ${REFREEZE} -eq 0 ]] && already_installed; then
  echo "oracle venv ${VENV} is up to date (marker ${MARKER}); elapsed $((SECONDS - start)) s"
  exit 0
fi

rm -f "${MARKER}"
[[ -x "${VENV}/bin/python" ]] || "${BASE_PY}" -m venv "${VENV}"

CARGS=()
if [[ ${REFREEZE} -eq 0 ]]; then
  [[ -f "${CONSTRAINTS}" ]] || { echo "missing ${CONSTRAINTS}; run with --refreeze" >&2; exit 1; }
  CARGS=("--constraint=${CONSTRAINTS}")
fi

pip_install() {
  # This machine's pip config names index folders that do not exist; drop that noise, keep real errors.
  "${VENV}/bin/python" -m pip install --disable-pip-version-check -q "${CARGS[@]}" "$@" 2> >(
    grep -v "is ignored: it is neither a file nor a directory" >&2
  )
}

pip_install "${TORCH_PIN}"
pip_install "${TORCH_PIN}" "${ORACLE_PINS[@]}"
smoke_import

[[ ${REFREEZE} -eq 1 ]] && refreeze
pins_fingerprint >"${MARKER}"
echo "oracle venv ready at ${VENV}; elapsed $((SECONDS - start)) s"
