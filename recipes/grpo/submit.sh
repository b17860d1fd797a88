#!/usr/bin/env bash
# Runs INSIDE the Ray head pod (run-on-cluster.sh copies it there with the grpo_stack package):
#
#   bash /tmp/grpo-stack/submit.sh [--dry-run] [--follow] [--overwrite-checkpoints] [--expect-spec-sha256 HEX]
#
# Refuses a stale job spec, prints the run's banner (framework, model, cluster, batch sizes, where it resumes),
# runs the preparation steps the builder lists (miles: HF -> torch_dist conversion, skipped when done), submits
# the training job and prints its Ray job id. --follow streams its logs; the exit status is then the job's.
# GRPO_JOB_SPEC (set on the pod by the chart) names the job.json; RAY_ADDRESS defaults to the local dashboard.
set -euo pipefail
# No `set -x`: xtrace would print whatever the environment carries into the pod log.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m grpo_stack.job.submit "$@"
