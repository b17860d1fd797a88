"""GRPO855 one-shot-restarts."""

from __future__ import annotations

from collections.abc import Iterator

from ..finding import Hit, Severity
from ._objects import argv_of, containers, literal_env, torch_rank
from ._one_shot import idles_at_end, inspects_only, one_shot, training_launcher

CODE = "GRPO855"
NAME = "one-shot-restarts"
SEVERITY = Severity.WARNING
CATEGORY = "correctness"
SUMMARY = ("A bare Pod (or a batch workload's pod template) runs a command that finishes under restartPolicy "
           "Always, or a Deployment or StatefulSet runs a training launcher: it runs for ever.")
DOC = """## What it does
Reads every bare Pod (`kind: Pod`, no controller) whose `restartPolicy` is `Always` or unset (the default) and
whose every container is a one-shot command: it states its `command` or `args` (an image's own entrypoint may be a
server: left alone), declares no ports and no probes, and does not idle on purpose (`sleep infinity`, a sleep of a
day or more, `tail -f`, a `while` loop). Such a Pod is reported as a warning: the kubelet starts the command
again each time it finishes.

A container that gives only `args` runs the image's own entrypoint with them, which may be a server: left alone.
The pod template of a custom batch workload that keeps its own `restartPolicy` (a Volcano Job's tasks; not the
core Job, which refuses `Always`, nor Kubeflow's, whose operators set it from their replica specs) is reported
the same way when it says `restartPolicy: Always`: the job's work never completes.

Other controllers' pods must restart, and whether their command ends cannot in general be read from the manifest (a
queue worker with no port looks like a script). One command says so itself: a distributed training launcher
(`torchrun`, `python -m torch.distributed.run`, `deepspeed`, `accelerate launch`, `mpirun`, `horovodrun`), which
starts one run's ranks and exits when the run ends. A Deployment, StatefulSet, ReplicaSet, DaemonSet or bare Pod
under `Always` whose container runs one is reported, ports or probes or not: the finished run starts again from the
top, and a failed one is retried for ever (`torchrun ... && sleep infinity` still exits when the run fails). A
script that ends, on every path, in a wait that does not end (`sleep infinity` after the launcher with no `set -e`,
an `if` whose every branch sleeps) keeps the pod for inspection and restarts nothing: not reported. A controller
whose every container only inspects and exits is reported too: it runs only programs that start nothing and end
(`nvidia-smi`, `echo`, `hostname`, `ls`, a GPU sample such as `deviceQuery`), with no port, no probe and no idling:
its pods sit in `CrashLoopBackOff` for ever, holding their GPUs.

A bare Pod under `Always` whose container is one rank of a `torch.distributed` run by its literal env
(`WORLD_SIZE` above one, a `RANK`, a `MASTER_ADDR`; no port, no probe) is a warning naming the assumption that the
program is a training or batch run's rank, which ends: restarted, the rank waits for a world that is gone.

## Why is this bad?
A data preparation, download, evaluation or check (`nvidia-smi -L`) run as a bare Pod with the default
`restartPolicy: Always` finishes and is started again, for ever: it re-downloads, re-writes its results, keeps
its GPU, and shows `CrashLoopBackOff` or `Completed` → `Running` cycles instead of a finished run.

## Example
```yaml
kind: Pod
spec:
  containers:
    - name: check
      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
      command: ["nvidia-smi", "-L"]
```
Use instead:
```yaml
kind: Pod
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
      command: ["nvidia-smi", "-L"]
```

## Fix
Set `restartPolicy: Never` (or `OnFailure`), or run the work as a Job (an Indexed Job, a JobSet or a PyTorchJob
where it spans several pods).
"""

def check(ctx) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        if _batch_template(o, pod_path) and pod.get("restartPolicy") == "Always":
            pairs = [c for field, _i, c in containers(pod) if field == "containers"]
            if pairs and all(one_shot(c) for c in pairs):
                yield Hit(f"{pod_path}.restartPolicy", f"{o.kind} {o.name}: a batch workload's pods run commands "
                          "that finish under restartPolicy Always: each is started again when it ends, so the work "
                          "never completes", obj=o)
            continue
        bare_pod = o.kind == "Pod" and pod_path == "spec"
        if pod.get("restartPolicy", "Always") != "Always" or not (bare_pod or o.kind in RESTARTING):
            continue
        launched = _launched(pod)
        if launched and idles_at_end(launched[1]):
            continue  # kept running after the run, success or failure: nothing restarts it
        if launched:
            i, c, launcher = launched
            yield Hit(f"{pod_path}.containers.{i}", f"{o.kind} {o.name}: container {c.get('name', i)} runs "
                      f"{launcher}, which exits when its training run ends, in a pod that restarts: the run "
                      "starts again from the top when it finishes and is retried for ever when it fails (a "
                      "sleep after a successful run only holds its accelerators idle)", obj=o)
            continue
        if not bare_pod:
            pairs = [c for field, _i, c in containers(pod) if field == "containers"]
            if pairs and all(one_shot(c) and inspects_only(c) for c in pairs):
                argv = " ".join(str(w) for w in argv_of(pairs[0]))
                yield Hit(f"{pod_path}.containers", f"{o.kind} {o.name}: its pods only run commands that finish "
                          f"({argv[:80]}), and a {o.kind} restarts every container that ends: the pods sit in "
                          "CrashLoopBackOff for ever, holding what they asked for", obj=o)
            continue
        ranked = _rank_of_a_run(pod)
        if ranked:
            i, c, env = ranked
            yield Hit(f"{pod_path}.restartPolicy" if "restartPolicy" in pod else pod_path,
                      f"Pod {o.name}: container {c.get('name', i)} is rank {env['RANK']} of a run of "
                      f"{env['WORLD_SIZE']} (WORLD_SIZE, RANK and MASTER_ADDR in its env) under restartPolicy Always"
                      f"{'' if 'restartPolicy' in pod else ' (the default)'}: when the run ends the kubelet starts "
                      "the rank again, which waits for a world that is gone (assumed: the program is a training or "
                      "batch run's rank, which ends)", obj=o, severity=Severity.WARNING)
            continue
        pairs = [(field, i, c) for field, i, c in containers(pod) if field == "containers"]
        if pairs and all(one_shot(c) for _, _, c in pairs):
            _, i, first = pairs[0]
            argv = " ".join(str(w) for w in [*(first.get("command") or []), *(first.get("args") or [])])
            yield Hit(f"{pod_path}.restartPolicy" if "restartPolicy" in pod else pod_path,
                      f"Pod {o.name} runs a command that finishes ({argv[:80]}) under restartPolicy Always"
                      f"{'' if 'restartPolicy' in pod else ' (the default)'}: the kubelet starts it again each time "
                      "it ends, for ever", obj=o)


RESTARTING = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet")


def _launched(pod: dict) -> tuple[int, dict, str] | None:
    """(index, container, launcher) of the first regular container that runs a training launcher."""
    return next(((i, c, launcher) for field, i, c in containers(pod) if field == "containers"
                 and (launcher := training_launcher(c))), None)


def _rank_of_a_run(pod: dict) -> tuple[int, dict, dict[str, str]] | None:
    """(index, container, literal env) of the first regular container whose literal env makes it one rank of a
    torch.distributed run (WORLD_SIZE above one, a RANK and a MASTER_ADDR), with no port or probe of a server."""
    for field, i, c in containers(pod):
        env = literal_env(c)
        if field == "containers" and torch_rank(env) and not c.get("ports") and not any(
                c.get(p) for p in ("readinessProbe", "livenessProbe", "startupProbe")):
            return i, c, env
    return None


def _batch_template(o, pod_path: str) -> bool:
    """A pod template of a custom batch workload whose own restartPolicy the pods keep (a Volcano Job's tasks);
    the core Job refuses Always itself, and Kubeflow's operators set it from their replica specs."""
    group = str(o.obj.get("apiVersion", "")).split("/")[0]
    return o.kind.endswith("Job") and "." in group and not group.endswith(("ray.io", "kubeflow.org")) \
        and "ReplicaSpecs" not in pod_path
