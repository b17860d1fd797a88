"""The in-pod submit: runs INSIDE the Ray head pod (recipes/grpo/submit.sh calls it).

    python3 -m grpo_stack.job.submit [--dry-run] [--follow] [--expect-spec-sha256 HEX | --expect-spec-text-sha256 HEX]

1. Refuses a stale job spec: the spec is read from the ConfigMap mount, which the kubelet refreshes some time after
   `helm upgrade`; run-on-cluster.sh passes the hash of the spec the release holds now; in job mode the chart
   writes the hash of the job.json text it rendered into the RayJob's entrypoint (--expect-spec-text-sha256).
2. Runs grpo-lint's job checks (grpo_stack.jobgate: batch math, lengths, parallelism, the builder's own refusals)
   over the spec, with grpo-lint's rule code: values given with `helm install --set` or a hand-edited job
   ConfigMap never met grpo-lint. An error finding refuses the submit with grpo-lint's text and exit status (1);
   `--skip-check CODE` skips one (what an inline grpo-lint suppression does for the lint).
3. Builds the command with the one builder and prints a banner: framework and build, model, cluster shape, batch
   sizes, and where the run starts (fresh / resumes from step N in DIR / cannot tell -> refused). A verl FSDP
   checkpoint written by another world size than the values' is refused too (it loads only onto its own).
4. Refuses a second run while one of this submit's jobs (a training or a preparation step) is PENDING or RUNNING on
   the head, naming it: one run per release's Ray cluster.
   With global.job.fabricGate, runs the GPU and fabric gate's probe as a Ray job first (DCGM diagnostics and
   all-reduces on each node and across them, grpo_stack.fabricgate) and refuses the run, naming the node, on a
   failure.
5. Runs the preparation steps the builder lists (miles: HF -> torch_dist conversion), each skipped when its output
   holds a matching manifest, each as a Ray job waited for.
6. With global.job.deadline: prints when it falls and how the framework saves before it, refuses one that has
   passed, gives verl's legacy trainer the end time (the Ray job's env) and, with --follow, creates miles' save
   sentinel one grace period ahead (grpo_stack.deadline).
7. Submits the training job and prints its Ray job id. With --follow it streams the logs and supervises the run
   (job/supervised.py): a run is done only at the total steps verl states at start; a failed attempt is
   resubmitted through this resume gate up to global.job.supervision.retries times; every attempt is recorded on
   the run's storage; the exit status is the run's.
Exit status: 0 submitted (or finished with --follow); 1 the job (or a preparation step) failed or ended with steps
left, or grpo-lint's job checks found an error (nothing submitted), or the driver's own exit code; 2 refused.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from typing import Any

from ..deadline import miles_save_request_at, request, runtime_env
from ..fabricgate import judge_report, probe
from ..supervise.decide import Policy
from . import BuildError
from .args import BuiltJob, PrepareStep
from .miles import resume_mode
from .rayjobs import Ray, new_job_id
from .resume import TRACKER, ResumeState, resume_state, start_refusal, tracker_text
from .spec import Spec, job_deadline

MANIFEST = "grpo-stack-manifest.json"
PROBE_FILE = "fabric_probe.py"  # the gate's probe, alone in its Ray job's working_dir


class Refused(Exception):
    """Stop before anything is submitted (exit 2)."""


def spec_sha256(data: Any) -> str:
    """Hash of the job spec's content (canonical JSON), equal for the ConfigMap value and its mounted file."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def load_spec(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:
        raise Refused(f"job spec {path} is not readable JSON ({exc}); is this the Ray head pod?") from exc
    if not isinstance(data, dict):
        raise Refused(f"job spec {path} is not a JSON object (the chart's job.json is one)")
    return data


def spec_text_sha256(path: str) -> str:
    """Hash of the spec file's text without its trailing newlines: what the chart hashes in job mode (sha256sum of
    the job.json it writes into the ConfigMap), so a RayJob's entrypoint names the spec it was rendered with."""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read().rstrip(b"\n")).hexdigest()


def check_fresh_spec(path: str, data: dict[str, Any], expected: str | None, expected_text: str | None = None) -> None:
    if expected_text is not None and spec_text_sha256(path) != expected_text.lower():
        raise Refused(
            f"the mounted job spec {path} is not the one this RayJob was rendered with (text sha256 "
            f"{expected_text[:12]}): the job ConfigMap changed after the RayJob was created. Create the RayJob "
            "again (helm upgrade after deleting it) to run the spec the release holds now.")
    if expected is None:
        return
    have = spec_sha256(data)
    if have != expected.lower():
        raise Refused(
            f"the mounted job spec {path} (sha256 {have[:12]}) is not the one the release holds now "
            f"(sha256 {expected[:12]}): the job ConfigMap changed and this pod still sees the old copy. "
            "The kubelet refreshes ConfigMap mounts within about a minute; retry then, or roll the Ray pods.")


def arg_value(built: BuiltJob, *keys: str) -> Any:
    for a in built.args:
        if a.key in keys:
            return a.value
    return None


def banner(spec: Spec, built: BuiltJob, state: ResumeState) -> list[str]:
    c = spec.cluster
    build_note = next((n.split(": ", 1)[1] for n in built.notes if n.startswith("miles-build: ")), None)
    version = build_note or spec.job.get("frameworkVersion") or "the image's build"
    if built.framework == "miles":
        batches = {"rollout batch (prompts)": arg_value(built, "rollout-batch-size"),
                   "samples per prompt": arg_value(built, "n-samples-per-prompt"),
                   "global batch (samples)": arg_value(built, "global-batch-size"),
                   "micro batch": arg_value(built, "micro-batch-size")}
    else:
        batches = {"train batch (prompts)": arg_value(built, "data.train_batch_size"),
                   "samples per prompt": arg_value(built, "actor_rollout_ref.rollout.n"),
                   "mini batch (prompts)": arg_value(built, "actor_rollout_ref.actor.ppo_mini_batch_size")}
    lines = [
        f"framework:  {built.framework} ({version})",
        f"model:      {spec.get('model.preset')} from {spec.on_storage(spec.get('model.path'))}",
        f"cluster:    {c.get('nodes')} x {c.get('gpuInstanceType', '?')} ({c.get('gpusPerNode')} GPUs each, "
        f"{spec.world_size} in all)",
        "batches:    " + ", ".join(f"{k} {v}" for k, v in batches.items() if v is not None),
        f"resume:     {state.line()}",
    ]
    return ["submit: " + x for x in lines]


def use_v1(spec: Spec) -> bool:
    return bool(spec.opt("verl.useV1Trainer", False))


def shape(spec: Spec) -> str:
    return f"{spec.cluster.get('nodes')} node(s) x {spec.cluster.get('gpusPerNode')} GPUs"


def checkpoint_state(spec: Spec, built: BuiltJob) -> ResumeState:
    mode, path = resume_mode(spec)
    return resume_state(built.framework, spec.on_storage(spec.get("trainer.checkpointDir")), mode, path)


def expected_manifest(step: PrepareStep) -> tuple[dict[str, Any], str]:
    """The builder's manifest plus a hash of the source model's config.json (a re-downloaded model differs);
    the problem when that file cannot be read."""
    out = dict(step.manifest)
    src = out.get("hfCheckpoint")
    if src:
        try:
            with open(os.path.join(src, "config.json"), "rb") as fh:
                out["hfConfigSha256"] = hashlib.sha256(fh.read(1 << 20)).hexdigest()
        except FileNotFoundError:
            return out, f"the model is not staged yet: {src} has no config.json (NOTES step 2 stages it)"
        except OSError as exc:
            return out, (f"cannot read {src}/config.json ({exc.strerror or exc}); "
                         "is the model staged on the shared storage?")
    return out, ""


def prepared(step: PrepareStep, want: dict[str, Any]) -> tuple[bool, str]:
    """Whether the step's output is complete and from the same input (manifest written after success)."""
    try:
        with open(os.path.join(step.output, MANIFEST), encoding="utf-8") as fh:
            have = json.load(fh)
    except FileNotFoundError:
        return False, "no manifest"
    except (OSError, json.JSONDecodeError) as exc:
        return False, f"manifest unreadable ({exc})"
    if have != want:
        diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
        return False, f"manifest differs in {', '.join(diff)}"
    text, problem = tracker_text(os.path.join(step.output, TRACKER))
    if problem or text != "release":  # the converter writes "release" (tools/convert_hf_to_torch_dist.py)
        return False, f"no converted checkpoint ({problem or repr(text)} in {TRACKER})"
    return True, "matching manifest"


def gate(path: str, data: dict[str, Any], skip: list[str]) -> BuiltJob | None:
    """grpo-lint's job checks over the spec: the built job, or None when an error finding refuses it (printed)."""
    from .. import jobgate

    unknown = jobgate.unknown_codes(skip)
    if unknown:
        raise Refused(f"--skip-check {', '.join(unknown)}: not a job check; the in-pod gate runs "
                      f"{', '.join(jobgate.JOB_RULES)}")
    result = jobgate.check(data, path, skip)
    if result.findings:
        print(result.text(), end="", file=sys.stderr)
    if result.errors:
        print(f"submit: refused: grpo-lint's job checks found {len(result.errors)} error(s) in {path}; nothing "
              "submitted. Fix the values and `helm upgrade` (grpo-lint VALUES prints the same findings)",
              file=sys.stderr)
        return None
    if result.build_error is not None:
        raise Refused(f"{path}: {result.build_error}")
    for code in skip:
        print(f"submit: job check {code.upper()} skipped (--skip-check)")
    return result.built


def refuse_a_second_run(ray: Ray) -> None:
    """One run per Ray cluster: two trainings would share its GPUs (the second waits on a placement group that
    never fits, or both run out of memory) and write to whichever checkpoint directories their specs name."""
    active = ray.active_runs()
    if active:
        named = ", ".join(f"{job_id} ({status})" for job_id, status in active)
        raise Refused(f"this Ray cluster already runs {named}: one run per release. Wait for it to end, or stop "
                      "it (grpo-run stop, docs/day-2.md) and submit again")


def submit_probe(ray: Ray, args: list[str]) -> str:
    """The gate's probe as a Ray job: its one file as the job's working_dir (Ray uploads it from this pod, so the
    driver runs wherever Ray places it), run by the image's python3."""
    with tempfile.TemporaryDirectory(prefix="grpo-fabric-gate-") as tmp:
        shutil.copyfile(probe.__file__, os.path.join(tmp, PROBE_FILE))
        return ray.submit(["python3", PROBE_FILE, *args], {}, 0, "grpo-fabric-gate", working_dir=tmp)


def fabric_gate(ray: Ray, spec: Spec) -> None:
    """global.job.fabricGate: the probe on this cluster, judged here; an error refuses the run."""
    gate = spec.opt("fabricGate")
    if gate is None:
        return
    job_id = submit_probe(ray, ["--nodes", str(spec.cluster["nodes"]), "--gpus-per-node",
                                str(spec.cluster["gpusPerNode"]), "--dcgm-level", str(gate.get("dcgmLevel", 1)),
                                "--max-mib", str(gate.get("maxMiB", 2048)),
                                "--timeout", str(gate.get("timeoutSeconds", 1800))])
    print(f"submit: fabric gate: Ray job id {job_id} ({spec.cluster['nodes']} node(s) x "
          f"{spec.cluster['gpusPerNode']} GPU(s))", flush=True)
    status, _ = ray.wait(job_id)
    findings = judge_report(ray.logs(job_id), str(spec.cluster["gpuInstanceType"]),
                            int(spec.cluster.get("efaPerNode") or 0) > 0, gate.get("minBusBandwidthGBps"))
    for f in findings:
        print(f"submit: fabric gate: {f.severity}: {f.node}: {f.message}", file=sys.stderr)
    failed = sorted({f.node for f in findings if f.severity == "error"})
    if failed:
        raise Refused(f"the GPU and fabric gate failed on {', '.join(failed)} (probe {status}; logs: ray job logs "
                      f"{job_id}): nothing submitted. Replace the node (cordon it and delete its Ray pod) and submit "
                      "again; docs/observability.md, GPU and fabric gate")
    print(f"submit: fabric gate: passed on {spec.cluster['nodes']} node(s)", flush=True)


def run(opts: argparse.Namespace) -> int:
    data = load_spec(opts.spec)
    check_fresh_spec(opts.spec, data, opts.expect_spec_sha256, opts.expect_spec_text_sha256)
    built = gate(opts.spec, data, opts.skip_check)
    if built is None:
        return 1
    try:
        spec = Spec(data)
    except BuildError as exc:
        raise Refused(f"{opts.spec}: {exc}") from exc
    state = checkpoint_state(spec, built)
    for line in banner(spec, built, state):
        print(line)
    deadline = job_deadline(spec)
    end = None
    if deadline is not None:
        now = time.time()
        end = deadline.end_time(opts.started_at if opts.started_at is not None else now)
        if end <= now:
            raise Refused(f"global.job.deadline: the deadline {request.iso(end)} has passed; nothing submitted")
        print(f"submit: deadline:   {request.describe(deadline, built.framework, use_v1(spec), end, now)}")
    refusal = start_refusal(state, built.framework, spec.world_size, shape(spec), opts.overwrite_checkpoints)
    if refusal:
        raise Refused(refusal)
    env = dict(built.env)
    if end is not None:
        env.update(runtime_env(built.framework, use_v1(spec), end))
    ray = None if opts.dry_run else Ray(opts.address)
    if ray is not None:
        refuse_a_second_run(ray)
        fabric_gate(ray, spec)
    elif spec.opt("fabricGate") is not None:
        print("submit: fabric gate: runs on the cluster before training (not in a dry run)")
    for i, step in enumerate(built.prepare, 1):
        want, problem = expected_manifest(step)
        if problem and ray is not None:
            raise Refused(f"{step.name}: {problem}")
        done, why = prepared(step, want) if not problem else (False, problem)
        head = f"submit: step {i} {step.name} -> {step.output}"
        if done:
            print(f"{head}: skipped ({why})")
            continue
        print(f"{head}: runs first ({why}; {step.why})")
        print(f"submit:   {shlex.join(step.argv)}")
        if ray is None:
            continue
        job_id = ray.submit(list(step.argv), env, step.num_gpus, f"grpo-{step.name}")
        print(f"submit: Ray job id {job_id} ({step.name})", flush=True)
        if opts.follow:
            ray.follow(job_id)
        status, code = ray.wait(job_id)
        if code:
            print(f"submit: {step.name} ended {status}; training not submitted. Logs: ray job logs {job_id}",
                  file=sys.stderr)
            return code
        with open(os.path.join(step.output, MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(want, fh, indent=2, sort_keys=True)
    argv = built.argv()
    model_script = next((n.split(": ", 1)[1] for n in built.notes if n.startswith("model-args-script: ")), None)
    if model_script:  # miles reads its model-architecture flags from the model script shipped in its image
        argv = ["bash", "-c", 'source "$0" && exec "$@" "${MODEL_ARGS[@]}"', model_script, *argv]
    print(f"submit: {shlex.join(argv)}")
    for k, v in env.items():
        print(f"submit: runtime env {k}={v}")
    if ray is None:
        print("submit: dry run, nothing submitted")
        return 0
    label = f"grpo-{built.framework}"
    checkpoint_dir = spec.on_storage(spec.get("trainer.checkpointDir"))
    from .supervised import RayAttempts, follow, step_file_env, watching

    if not opts.follow:
        job_id = new_job_id(label)
        job_id = ray.submit(argv, {**env, **step_file_env(built.framework, checkpoint_dir, job_id)}, 0, label,
                            job_id=job_id)
        print(f"submit: Ray job id {job_id}", flush=True)
        if deadline is not None and end is not None and built.framework == "miles":
            print(f"submit: deadline: nothing creates {arg_value(built, 'save-trigger-sentinel')} for this run (the "
                  f"submit does not follow it): create it by {request.iso(miles_save_request_at(deadline, end))}, "
                  "or submit with --follow", file=sys.stderr)
        print(f"submit: follow with: ray job logs --follow {job_id}")
        return 0
    if deadline is not None and end is not None and built.framework == "miles":
        request.schedule_sentinel(str(arg_value(built, "save-trigger-sentinel")), miles_save_request_at(deadline, end),
                                  time.time(), lambda line: print(f"submit: {line}", flush=True))

    first_sha = spec_sha256(data)

    def regate() -> str | None:
        """Before a resubmission: the spec the release holds now is the one this run started with, and the resume
        gate passes again on the checkpoints the last attempt left."""
        now = load_spec(opts.spec)
        if spec_sha256(now) != first_sha:
            return (f"{opts.spec} changed since this run was submitted (a helm upgrade): not resubmitted under the "
                    "old supervision; submit again to run the new spec")
        again = checkpoint_state(spec, built)
        return start_refusal(again, built.framework, spec.world_size, shape(spec), opts.overwrite_checkpoints)

    policy = Policy(total_steps=None, retries=int(spec.opt("supervision.retries", 0) or 0),
                    resume_mode=resume_mode(spec)[0])
    attempts = RayAttempts(ray, argv, env, label, regate, checkpoint_dir, built.framework, watching(spec))
    return follow(attempts, policy, checkpoint_dir, built.framework, lambda: checkpoint_state(spec, built))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m grpo_stack.job.submit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default=os.environ.get("GRPO_JOB_SPEC", "/etc/grpo-stack/job.json"))
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS", "http://127.0.0.1:8265"))
    p.add_argument("--dry-run", action="store_true", help="print the banner, steps and command; submit nothing")
    p.add_argument("--follow", action="store_true", help="stream the job's logs; exit with its status")
    p.add_argument("--overwrite-checkpoints", action="store_true",
                   help="with resume.mode disable, start at step 0 even where an earlier run's checkpoints are")
    p.add_argument("--skip-check", action="append", default=[], metavar="CODE",
                   help="skip one of grpo-lint's job checks (repeatable), e.g. one the values suppress for grpo-lint")
    p.add_argument("--expect-spec-sha256", help="refuse unless the mounted spec has this content hash")
    p.add_argument("--started-at", type=float, metavar="UNIX_SECONDS",
                   help="when the run's global.job.deadline.hours budget started (job mode: the RayJob's start); "
                   "default: now")
    p.add_argument("--expect-spec-text-sha256", help="refuse unless the mounted spec file's text (trailing newlines "
                   "dropped) has this hash: the chart's job mode writes it into the RayJob's entrypoint")
    p.add_argument("--spec-sha256-of", metavar="FILE", help="print the content hash of a job spec ('-': stdin)")
    opts = p.parse_args(argv)
    try:
        if opts.spec_sha256_of:
            text = sys.stdin.read() if opts.spec_sha256_of == "-" else open(opts.spec_sha256_of).read()
            print(spec_sha256(json.loads(text)))
            return 0
        return run(opts)
    except Refused as exc:
        print(f"submit: refused: {exc}", file=sys.stderr)
        return 2
    except (ValueError, OSError, RecursionError) as exc:
        print(f"submit: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # the Ray job API's refusals (ray.dashboard.modules.dashboard_sdk)
        print(f"submit: the Ray head refused the job: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
