"""Each grpo-run verb: resolve the release (locate), refuse what cannot be done, run it; the in-pod half through an
Executor (the head pod by default), so the tests swap the transport, never the logic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from . import Refused, locate
from .kube import Executor, Kube, write
from .status import ClusterView, job_mode_line, lines, summary_line

# What `ray job stop` can save, said where it is done (docs/day-2.md, Stopping).
STOP_NOTE = ("stop: `ray job stop` sends the driver SIGTERM and kills it 3 s later. verl and miles save only at a "
             "step boundary (trainer.saveFreq), never on a signal: the steps since the last checkpoint are lost, the "
             "checkpoints already written stay on the shared storage, and the supervisor does not resubmit a stopped "
             "job. `grpo-run submit` resumes from the last checkpoint (resume.mode: auto).")
NO_TOOLS = ("the grpo_stack package is not in the head pod (run-on-cluster.sh copies it there at submit; a head pod "
            "restarted since has lost it): submit, or `grpo-run submit --dry-run`, first")
RECIPE = Path(__file__).resolve().parents[3] / "recipes" / "grpo" / "run-on-cluster.sh"


def view_of(target: locate.Target) -> ClusterView:
    return ClusterView(target.release, target.namespace, target.mode, target.raycluster, target.rayjob, target.head,
                       target.workers)


def _executor(kube: Kube, target: locate.Target, executor: Executor | None) -> Executor:
    return executor if executor is not None else target.executor(kube)


def _inpod_error(code: int, err: str) -> str:
    if "No module named grpo_stack" in err:
        return NO_TOOLS
    tail = [ln for ln in err.strip().splitlines() if ln.strip()]
    return tail[-1] if tail else f"the in-pod command exited {code}"


def status(kube: Kube, namespace: str, release: str, executor: Executor | None = None) -> list[str]:
    target = locate.find(kube, namespace, release)
    run, error = None, ""
    try:
        code, out, err = _executor(kube, target, executor).inpod(["status"])
        if code == 0:
            run = json.loads(out)
        else:
            error = _inpod_error(code, err)
    except Refused as exc:
        error = str(exc)
    except ValueError as exc:
        error = f"the head pod's answer is not JSON ({exc})"
    return lines(view_of(target), run, error)


def logs(kube: Kube, namespace: str, release: str, job: str | None, follow: bool, stored: bool,
         executor: Executor | None = None) -> int:
    target = locate.find(kube, namespace, release)
    args = ["logs", *([job] if job else []), *(["--follow"] if follow else []), *(["--stored"] if stored else [])]
    code, _, err = _executor(kube, target, executor).inpod(args, sink=write)
    if code:
        raise Refused(_inpod_error(code, err))
    return 0


def stop(kube: Kube, namespace: str, release: str, job: str | None, executor: Executor | None = None) -> int:
    target = locate.find(kube, namespace, release)
    code, out, err = _executor(kube, target, executor).inpod(["stop", *([job] if job else [])])
    if code:
        raise Refused(_inpod_error(code, err))
    for job_id, state in json.loads(out)["stopped"].items():
        print(f"stop: Ray job {job_id}: {state}")
    print(STOP_NOTE)
    return 0


def list_releases(kube: Kube, namespace: str) -> list[str]:
    found = locate.releases(kube, namespace)
    if not found:
        return [f"no release with a RayCluster or RayJob in namespace {namespace}"]
    out = []
    for r in found:
        state = job_mode_line(r.get("rayjob")) if r["mode"] == "job" else summary_line(r.get("raycluster"))
        out.append(f"{r['release']}\t{r['mode']}\t{state}")
    return out


def list_runs(kube: Kube, namespace: str, release: str, executor: Executor | None = None) -> list[str]:
    target = locate.find(kube, namespace, release)
    code, out, err = _executor(kube, target, executor).inpod(["jobs"])
    if code:
        raise Refused(_inpod_error(code, err))
    data = json.loads(out)
    rows = [f"{j['id']}\t{j['status']}" for j in data["jobs"]]
    known = {j["id"] for j in data["jobs"]}
    rows += [f"{job_id}\tstored log only (the head no longer knows it)" for job_id in data["stored"]
             if job_id not in known]
    if data.get("rayError"):
        rows.append(f"ray: {data['rayError']}")
    return rows or [f"no run of release {release} yet"]


def submit(namespace: str, release: str, args: list[str], kubeconfig: str | None, script: str | None) -> int:
    """The one submit: run-on-cluster.sh, with this command's kubeconfig."""
    path = Path(script) if script else RECIPE
    if not path.is_file():
        raise Refused(f"{path}: not found; `grpo-run submit` runs recipes/grpo/run-on-cluster.sh of a grpo-stack "
                      "checkout (--script PATH names it)")
    env = {**os.environ, **({"KUBECONFIG": kubeconfig} if kubeconfig else {})}
    sys.stdout.flush()
    return subprocess.run(["bash", str(path), "--release", release, "--namespace", namespace, *args], env=env,
                          check=False).returncode
