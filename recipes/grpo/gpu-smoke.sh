#!/usr/bin/env bash
# Two real GRPO steps on ONE GPU node with the verl image and a tiny Qwen3 model built at run time (random
# weights, no download). Proves the image's verl + vLLM + Ray + torch start, roll out, score and update on GPUs.
# Not part of CI (it needs GPUs and the image). From a checkout of this repository on the GPU node:
#
#   docker run --rm --gpus all --shm-size=16g -v "$PWD":/src -w /src <registry>/grpo-stack/verl:<tag> \
#     bash recipes/grpo/gpu-smoke.sh
#
#   GPU_SMOKE_GPUS   GPUs to use (default: all that nvidia-smi lists)
#   GPU_SMOKE_DIR    where the model, data, checkpoints and log go (default: a new temp dir)
#
# Exit status: main_ppo's; 1 as well when it exits 0 without having logged step 2.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${GPU_SMOKE_DIR:-$(mktemp -d -t grpo-gpu-smoke.XXXXXX)}"
gpus="${GPU_SMOKE_GPUS:-$(nvidia-smi -L | grep -c '^GPU ')}"
[ "$gpus" -ge 1 ] || { echo "gpu-smoke: no GPU visible (nvidia-smi -L)" >&2; exit 2; }
log="${work}/main_ppo.log"
mkdir -p "$work"

echo "gpu-smoke: ${gpus} GPU(s), work dir ${work}"
# The same tiny-model builder the CPU start-up tier uses; rows: enough for two steps of 2 prompts per GPU.
python3 "${root}/tests/startup/build_fixtures.py" "$work" --arch qwen3 --rows $((gpus * 2 * 4))

batch=$((gpus * 2))  # prompts per step; with rollout.n=2 every GPU gets whole micro-batches
set +e
python3 -m verl.trainer.main_ppo --config-name=ppo_trainer \
  algorithm.adv_estimator=grpo \
  data.train_files="${work}/data/train.parquet" \
  data.val_files="${work}/data/val.parquet" \
  data.train_batch_size="${batch}" \
  data.max_prompt_length=64 \
  data.max_response_length=32 \
  actor_rollout_ref.model.path="${work}/model" \
  actor_rollout_ref.actor.ppo_mini_batch_size="${batch}" \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.actor.use_kl_loss=false \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.n=2 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.3 \
  actor_rollout_ref.rollout.enforce_eager=true \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \
  trainer.nnodes=1 \
  trainer.n_gpus_per_node="${gpus}" \
  trainer.total_training_steps=2 \
  trainer.val_before_train=false \
  trainer.test_freq=-1 \
  trainer.save_freq=-1 \
  trainer.logger='[console]' \
  trainer.project_name=grpo-stack-gpu-smoke \
  trainer.experiment_name=tiny-qwen3 \
  trainer.default_local_dir="${work}/checkpoints" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

if [ "$status" -ne 0 ]; then
  echo "gpu-smoke: FAILED, main_ppo exited ${status}; full log: ${log}" >&2
  exit "$status"
fi
if ! grep -q "step:2 " "$log"; then
  echo "gpu-smoke: FAILED, main_ppo exited 0 but never logged step 2; full log: ${log}" >&2
  exit 1
fi
echo "gpu-smoke: OK, two GRPO steps on ${gpus} GPU(s); log: ${log}"
