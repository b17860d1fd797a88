#!/usr/bin/env bash
# Runs INSIDE the Ray head pod: build the command from the chart-rendered job spec and submit it to Ray.
#
#   bash /tmp/grpo-stack/submit.sh [--dry-run]
#
# GRPO_JOB_SPEC (set on the pod by the chart) names the job.json; RAY_ADDRESS defaults to the local dashboard.
set -euo pipefail
# No `set -x`: xtrace would print whatever the environment carries into the pod log.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
spec="${GRPO_JOB_SPEC:-/etc/grpo-stack/job.json}"
address="${RAY_ADDRESS:-http://127.0.0.1:8265}"
dry_run=0
[ "${1:-}" = "--dry-run" ] && dry_run=1

[ -r "$spec" ] || { echo "submit: job spec ${spec} is not readable (is this the Ray head pod?)" >&2; exit 2; }

# The one builder; NUL-separated so no argument is ever re-split by the shell.
mapfile -d '' argv < <(PYTHONPATH="$here" python3 -m grpo_stack.job "$spec" --format argv)
[ "${#argv[@]}" -gt 1 ] || { echo "submit: the builder produced no command" >&2; exit 2; }
notes="$(PYTHONPATH="$here" python3 -m grpo_stack.job "$spec" --format json \
  | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["notes"]))')"

# miles reads its model-architecture flags from the model script shipped in its image.
model_script="$(sed -n 's/^model-args-script: //p' <<< "$notes")"
if [ -n "$model_script" ]; then
  # shellcheck disable=SC2016  # $0, $@ and MODEL_ARGS are expanded by the inner bash, on purpose
  argv=(bash -c 'source "$0"; exec "$@" "${MODEL_ARGS[@]}"' "$model_script" "${argv[@]}")
fi

echo "submit: ${argv[*]}"
if [ "$dry_run" -eq 1 ]; then
  exit 0
fi
# The head advertises zero CPUs, so one entrypoint CPU places the driver on a GPU worker (which has CUDA).
exec ray job submit --address "$address" --entrypoint-num-cpus 1 --no-wait -- "${argv[@]}"
