#!/usr/bin/env bash
# Create the lm-eval wire tier's venv: images/lm-eval/requirements.txt (the image's own pins) without torch.
#
# Usage: tests/wires/setup_lmeval_venv.sh [--refreeze]
#   LMEVAL_VENV  venv path (default: tests/tier_venvs.py's, ~/.cache/grpo-stack/venvs/lmeval-<hash of its inputs>)
#   --refreeze   rewrite tests/wires/lmeval-constraints.txt from `pip freeze` after installing
#
# torch is left out: the chart's Job runs `--model local-completions` with `tokenizer_backend=None`, which builds
# its requests without torch or a tokenizer (tests/wires/test_lmeval_wire.py imports exactly that path).
# Idempotent: a marker holds a hash of the inputs; a matching marker exits at once.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
REQUIREMENTS="${ROOT}/images/lm-eval/requirements.txt"
CONSTRAINTS="${HERE}/lmeval-constraints.txt"

fingerprint() {
  { cat "$0" "${REQUIREMENTS}" "${CONSTRAINTS}"; } | sha256sum | cut -c1-16
}
VENV="${LMEVAL_VENV:-$(cd "${ROOT}" && python3 -m tests.tier_venvs lmeval)}"
MARKER="${VENV}/.grpo-lmeval-installed"

REFREEZE=0
if [[ "${1:-}" == "--refreeze" ]]; then REFREEZE=1; elif [[ $# -gt 0 ]]; then echo "usage: $0 [--refreeze]" >&2; exit 2; fi
start=${SECONDS}
if [[ ${REFREEZE} -eq 0 && -x "${VENV}/bin/python" && -f "${MARKER}" && "$(cat "${MARKER}")" == "$(fingerprint)" ]]; then
  echo "lm-eval venv ${VENV} is up to date; elapsed $((SECONDS - start)) s"
  exit 0
fi
rm -f "${MARKER}"
[[ -x "${VENV}/bin/python" ]] || python3 -m venv "${VENV}"
"${VENV}/bin/python" -m pip install --disable-pip-version-check -q -r "${REQUIREMENTS}" --constraint="${CONSTRAINTS}" \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
"${VENV}/bin/python" -c "import lm_eval.models.openai_completions, lm_eval.tasks; print('lm_eval', __import__('lm_eval').__version__)"
if [[ ${REFREEZE} -eq 1 ]]; then
  "${VENV}/bin/python" -m pip freeze --exclude-editable >"${CONSTRAINTS}"
  echo "wrote ${CONSTRAINTS}"
fi
fingerprint >"${MARKER}"
echo "lm-eval venv ready at ${VENV}; elapsed $((SECONDS - start)) s"
