#!/usr/bin/env bash
# Submit the release's GRPO job from inside its Ray head pod.
#
#   recipes/grpo/run-on-cluster.sh --release grpo --namespace team-a [--dry-run]
#
# Everything the job needs comes from the release itself: the RayCluster is found by the release's
# app.kubernetes.io/instance label (never `.items[0]` of any head in the namespace), the command is built in the
# head pod from the job ConfigMap the chart mounted there, by the same builder `grpo-render --job` uses.
set -euo pipefail

usage() {
  echo "usage: $0 --release NAME --namespace NS [--dry-run] [--wait-timeout 30m]" >&2
  exit 2
}

release="" namespace="" dry_run=0 wait_timeout="30m"
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release="${2:-}"; shift 2 ;;
    --namespace) namespace="${2:-}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --wait-timeout) wait_timeout="${2:-}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[ -n "$release" ] && [ -n "$namespace" ] || usage

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(cd "$here/../../tools" && pwd)"
ns=(--namespace "$namespace")

die() { echo "run-on-cluster: $*" >&2; exit 1; }

clusters="$(kubectl "${ns[@]}" get rayclusters.ray.io -l "app.kubernetes.io/instance=${release}" \
  -o jsonpath='{.items[*].metadata.name}')" || die "cannot list RayClusters in namespace ${namespace}"
read -r -a cluster_list <<< "$clusters"
[ "${#cluster_list[@]}" -eq 1 ] || die "expected one RayCluster for release ${release} in ${namespace}, found ${#cluster_list[@]}: ${clusters:-none}"
cluster="${cluster_list[0]}"
selector="ray.io/cluster=${cluster}"

want_workers="$(kubectl "${ns[@]}" get rayclusters.ray.io "$cluster" -o jsonpath='{.spec.workerGroupSpecs[*].replicas}')"
want=0
for n in $want_workers; do want=$((want + n)); done

# Every Ray pod must be Ready, workers included: a Pending worker would leave the placement group waiting.
if ! kubectl "${ns[@]}" wait --for=condition=Ready pod -l "$selector" --timeout="$wait_timeout" >/dev/null; then
  kubectl "${ns[@]}" get pods -l "$selector" >&2 || true
  die "Ray pods of ${cluster} are not Ready after ${wait_timeout}"
fi
have="$(kubectl "${ns[@]}" get pods -l "${selector},ray.io/node-type=worker" -o jsonpath='{.items[*].metadata.name}' | wc -w)"
[ "$have" -eq "$want" ] || die "${cluster} has ${have} Ready workers, the RayCluster asks for ${want}"

head="$(kubectl "${ns[@]}" get pods -l "${selector},ray.io/node-type=head" -o jsonpath='{.items[*].metadata.name}')"
[ "$(wc -w <<< "$head")" -eq 1 ] || die "expected one head pod for ${cluster}, found: ${head:-none}"

# The builder is stdlib-only Python; ship it with the in-pod submit script.
kubectl "${ns[@]}" exec "$head" -- mkdir -p /tmp/grpo-stack
kubectl "${ns[@]}" cp "$tools/grpo_stack" "${head}:/tmp/grpo-stack/grpo_stack"
kubectl "${ns[@]}" cp "$here/submit.sh" "${head}:/tmp/grpo-stack/submit.sh"

args=()
[ "$dry_run" -eq 1 ] && args+=(--dry-run)
echo "run-on-cluster: submitting from ${namespace}/${head} (${want} workers Ready)"
kubectl "${ns[@]}" exec "$head" -- bash /tmp/grpo-stack/submit.sh "${args[@]}"
