#!/usr/bin/env bash
# Submit the release's GRPO job from inside its Ray head pod.
#
#   recipes/grpo/run-on-cluster.sh --release grpo --namespace team-a [--dry-run] [--follow] [--overwrite-checkpoints]
#                                  [--skip-check CODE]...
#
# --follow streams the Ray job's logs and exits with the job's status (0 only when it SUCCEEDED).
# --overwrite-checkpoints lets a resume.mode: disable run start at step 0 where an earlier run's checkpoints are.
# Everything the job needs comes from the release itself: the RayCluster is found by the release's
# app.kubernetes.io/instance label (never `.items[0]` of any head in the namespace), the command is built in the
# head pod from the job ConfigMap the chart mounted there, by the same builder `grpo-render --job` uses, after
# grpo-lint's job checks (batch math, lengths, parallelism) have passed on it there: values given with
# `helm install --set` or a hand-edited ConfigMap meet the same rules. An error is refused with grpo-lint's finding
# and exit status 1; --skip-check CODE skips one check (as a grpo-lint suppression in the values file does).
# Exit statuses (docs/submit.md): 0 submitted (--follow: succeeded); 1 grpo-lint's job checks found an error;
# 2 refused before anything was submitted (usage, a cluster that cannot be reached, no RayCluster for the release,
# pods not Ready, workers scaled to zero, a stale job spec, an unclear resume state, a run already running);
# otherwise the failed job's status.
set -euo pipefail

usage() {
  echo "usage: $0 --release NAME --namespace NS [--dry-run] [--follow] [--overwrite-checkpoints] [--skip-check CODE]... [--wait-timeout 30m]" >&2
  exit 2
}

release="" namespace="" dry_run=0 follow=0 overwrite=0 wait_timeout="30m" skip=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release="${2:-}"; shift 2 ;;
    --namespace) namespace="${2:-}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --follow) follow=1; shift ;;
    --overwrite-checkpoints) overwrite=1; shift ;;
    --wait-timeout) wait_timeout="${2:-}"; shift 2 ;;
    --skip-check) [ -n "${2:-}" ] || usage; skip+=(--skip-check "$2"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[ -n "$release" ] && [ -n "$namespace" ] || usage

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(cd "$here/../../tools" && pwd)"
ns=(--namespace "$namespace")

# Everything refused here happens before anything is submitted: exit 2 (1 is grpo-lint's findings, in the pod).
die() { echo "run-on-cluster: $*" >&2; exit 2; }

clusters="$(kubectl "${ns[@]}" get rayclusters.ray.io -l "app.kubernetes.io/instance=${release}" \
  -o jsonpath='{.items[*].metadata.name}')" \
  || die "cannot list RayClusters in namespace ${namespace} (is the cluster reachable, and KubeRay installed?)"
read -r -a cluster_list <<< "$clusters"
[ "${#cluster_list[@]}" -eq 1 ] || die "expected one RayCluster for release ${release} in ${namespace}, found ${#cluster_list[@]}: ${clusters:-none}"
cluster="${cluster_list[0]}"
selector="ray.io/cluster=${cluster}"

want_workers="$(kubectl "${ns[@]}" get rayclusters.ray.io "$cluster" -o jsonpath='{.spec.workerGroupSpecs[*].replicas}')" \
  || die "cannot read RayCluster ${cluster} in namespace ${namespace}"
want=0
for n in $want_workers; do want=$((want + n)); done
[ "$want" -gt 0 ] || [ "$dry_run" -eq 1 ] || die "${cluster} has its GPU workers scaled to zero \
(raycluster.worker.scaleToZero): set it to false, helm upgrade, and submit again (docs/day-2.md, Freeing the GPUs)"

if [ "$dry_run" -eq 1 ] && [ "$want" -eq 0 ]; then
  # A dry run submits nothing and runs its checks in the head: a stage-first install (workers scaled to zero,
  # docs/day-2.md) is checked before any GPU node is requested.
  wait_selector="${selector},ray.io/node-type=head"
  workers_note="no GPU workers: raycluster.worker.scaleToZero; a dry run needs none"
else
  # Every Ray pod must be Ready, workers included: a Pending worker would leave the placement group waiting.
  wait_selector="$selector"
  workers_note="${want} workers Ready"
fi
if ! kubectl "${ns[@]}" wait --for=condition=Ready pod -l "$wait_selector" --timeout="$wait_timeout" >/dev/null; then
  kubectl "${ns[@]}" get pods -l "$wait_selector" >&2 || true
  die "Ray pods of ${cluster} are not Ready after ${wait_timeout}"
fi
have="$(kubectl "${ns[@]}" get pods -l "${selector},ray.io/node-type=worker" -o jsonpath='{.items[*].metadata.name}' | wc -w)" \
  || die "cannot list the worker pods of ${cluster}"
[ "$have" -eq "$want" ] || die "${cluster} has ${have} Ready workers, the RayCluster asks for ${want}"

head="$(kubectl "${ns[@]}" get pods -l "${selector},ray.io/node-type=head" -o jsonpath='{.items[*].metadata.name}')" \
  || die "cannot list the head pod of ${cluster}"
[ "$(wc -w <<< "$head")" -eq 1 ] || die "expected one head pod for ${cluster}, found: ${head:-none}"

# The job's first reward and code-run calls follow the submit within minutes, and verl's reward client gives up
# after six attempts (about 25 s): the reward service and sandbox this release deploys must be Available first.
for component in reward-service sandbox-fusion; do
  sel="app.kubernetes.io/instance=${release},app.kubernetes.io/component=${component}"
  deploys="$(kubectl "${ns[@]}" get deployments -l "$sel" -o jsonpath='{.items[*].metadata.name}')" \
    || die "cannot list ${component} Deployments in namespace ${namespace}"
  [ -n "$deploys" ] || continue  # this release does not deploy it
  if ! kubectl "${ns[@]}" wait --for=condition=Available deployment -l "$sel" --timeout="$wait_timeout" >/dev/null; then
    kubectl "${ns[@]}" get pods -l "$sel" >&2 || true
    die "${component} of release ${release} is not Available after ${wait_timeout}; the job's first reward calls would fail"
  fi
done

# The job spec the release holds NOW, hashed here; the in-pod submit refuses a mount that still has an older one
# (the kubelet refreshes ConfigMap mounts some time after `helm upgrade`).
job_cms="$(kubectl "${ns[@]}" get configmaps -l "app.kubernetes.io/instance=${release},app.kubernetes.io/component=job" \
  -o jsonpath='{.items[*].metadata.name}')" || die "cannot list ConfigMaps in namespace ${namespace}"
read -r -a cm_list <<< "$job_cms"
[ "${#cm_list[@]}" -eq 1 ] || die "expected one job ConfigMap for release ${release} in ${namespace}, found ${#cm_list[@]}: ${job_cms:-none}"
spec_sha="$(kubectl "${ns[@]}" get configmap "${cm_list[0]}" -o 'jsonpath={.data.job\.json}' \
  | PYTHONPATH="$tools" python3 -m grpo_stack.job.submit --spec-sha256-of -)" \
  || die "cannot read job.json from ConfigMap ${cm_list[0]}"

# The builder and grpo-lint's job rules import only the standard library; ship them with the in-pod submit script.
kubectl "${ns[@]}" exec "$head" -- mkdir -p /tmp/grpo-stack || die "cannot exec in head pod ${head}"
kubectl "${ns[@]}" cp "$tools/grpo_stack" "${head}:/tmp/grpo-stack/grpo_stack" || die "cannot copy the builder into ${head}"
kubectl "${ns[@]}" cp "$here/submit.sh" "${head}:/tmp/grpo-stack/submit.sh" || die "cannot copy submit.sh into ${head}"

args=(--expect-spec-sha256 "$spec_sha")
[ "$dry_run" -eq 1 ] && args+=(--dry-run)
[ "$follow" -eq 1 ] && args+=(--follow)
[ "$overwrite" -eq 1 ] && args+=(--overwrite-checkpoints)
args+=("${skip[@]}")
echo "run-on-cluster: submitting from ${namespace}/${head} (${workers_note})"
# kubectl exec returns the in-pod submit's exit status: with --follow, the job's.
exec kubectl "${ns[@]}" exec "$head" -- bash /tmp/grpo-stack/submit.sh "${args[@]}"
