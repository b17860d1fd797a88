#!/usr/bin/env bash
# Create the start-up tier's venv from images/verl/requirements.txt (the image's own pins), run on the CPU.
#
# Usage: tests/startup/setup_startup_venv.sh [--refreeze]
#   STARTUP_VENV         venv path (default: `python3 -m tests.tier_venvs startup`, a per-machine cache outside
#                        the clone keyed by this script, constraints.txt and the image's requirements)
#   STARTUP_BASE_PYTHON  interpreter for the venv (default: python3; 3.11)
#   --refreeze           rewrite tests/startup/constraints.txt from `pip freeze` after installing
#
# Every pin of the image is installed at the image's version except the deviations below, each listed with its
# reason in images/README.md (tests/startup/test_pins.py checks both lists agree and what got installed).
# Idempotent: a marker holds a hash of the inputs; a matching marker exits at once.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
VENV="${STARTUP_VENV:-$(cd "${ROOT}" && python3 -m tests.tier_venvs startup)}"
BASE_PY="${STARTUP_BASE_PYTHON:-python3}"
REQUIREMENTS="${ROOT}/images/verl/requirements.txt"
CONSTRAINTS="${HERE}/constraints.txt"
MARKER="${VENV}/.grpo-startup-installed"

# Deviations from images/verl/requirements.txt (name -> how the start-up venv installs it instead).
TIER_TORCH="torch==2.13.0"                # image: torch 2.11.0 from the vLLM base; PyPI's 2.13.0 is a CUDA build
TORCH_COMPANIONS=(triton)                 # installed at the version TIER_TORCH requires, not the image's
NO_DEPS=(vllm flashinfer-python)          # vllm pins torch==2.11.0; flashinfer wants cuda-tile[tileiras]: see below
# Extras dropped from the dependencies of NO_DEPS packages: cuda-tile's `tileiras` (a GPU tile compiler) requires CUDA
# toolkit 13.2-13.4, torch 2.13.0 requires exactly 13.0.3; the tier compiles no kernel.
DROP_EXTRAS=(cuda-tile)
IGNORE_PYTHON=(megatron-core megatron-bridge)  # both declare Python >= 3.12; the CPU torch wheel here is 3.11
TE_CPU_PARTS=(transformer-engine transformer-engine-cu12)  # transformer-engine-torch is an sdist that needs nvcc

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then REFREEZE=1; elif [[ $# -gt 0 ]]; then echo "usage: $0 [--refreeze]" >&2; exit 2; fi
start=${SECONDS}

# One build at a time per venv: clones, worktrees and CI on one machine share it.
mkdir -p "$(dirname "${VENV}")"
exec 9>"${VENV}.lock"
flock 9

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
  if [[ "${name,,}" == torch ]] || in_list "${name}" "${TORCH_COMPANIONS[@]}" || in_list "${name}" "${NO_DEPS[@]}" "${IGNORE_PYTHON[@]}" || [[ "${name,,}" == transformer-engine ]]; then
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

pip_install "${TIER_TORCH}"
pip_install --constraint="${CONSTRAINTS}" "${TIER_TORCH}" "${REGULAR[@]}"
for name in "${NO_DEPS[@]}"; do
  # Its pin: the image's, or (a dependency of another NO_DEPS package) the frozen constraints'.
  pin="$(pin_of "${name}" || grep -i -E "^${name}==" "${CONSTRAINTS}" | head -1)"
  pip_install --no-deps --constraint="${CONSTRAINTS}" "${pin}"
  # The package's own dependencies, except torch and its companions (installed already), other NO_DEPS packages
  # (installed in their own turn) and the extras in DROP_EXTRAS.
  mapfile -t deps < <("${PY}" - "${name}" "${NO_DEPS[*]}" "${DROP_EXTRAS[*]}" <<'EOF'
import sys
from importlib.metadata import requires
from packaging.requirements import Requirement
skip = {"torch", "torchvision", "torchaudio", *sys.argv[2].lower().split()}
drop_extras = set(sys.argv[3].lower().split())
for line in requires(sys.argv[1]) or []:
    req = Requirement(line)
    if req.name.lower() in skip:
        continue
    if req.name.lower() in drop_extras:
        req.extras = set()
    if req.marker is None or req.marker.evaluate({"extra": ""}):
        req.marker = None
        print(req)
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
  "${PY}" -m pip freeze --exclude-editable | sed -E 's/^(torch==[0-9.]+)\+[a-z0-9]+$/\1/' \
    | grep -v -i -E '^(vllm|megatron-core|megatron-bridge|transformer-engine|transformer_engine|verl)(==|\[| @ )' \
    | grep -v ' @ ' >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS}"
fi
fingerprint >"${MARKER}"
echo "start-up venv ready at ${VENV}; elapsed $((SECONDS - start)) s"
