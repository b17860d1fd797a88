"""GRPO858 launcher-world-size."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..finding import Hit, Severity
from ..shell import split_words
from ._accelerators import asked as accelerators_asked
from ._objects import containers, literal_env, torch_rank
from ._serving import LOOPBACK_HOSTS, argv

CODE = "GRPO858"
NAME = "launcher-world-size"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A distributed launcher (torchrun, mpirun) starts more ranks per pod than the pod has accelerators, "
           "or a node count that is not the workload's pod count.")
DOC = """## What it does
Reads the launcher in every pod template's containers (`command`/`args`, and the commands of an inline script):
`torchrun`, `python -m torch.distributed.run` / `torch.distributed.launch`, `accelerate launch` and
`mpirun`/`mpiexec`, run by name or by path (`/opt/amazon/openmpi/bin/mpirun`), and compares it with the workload
that runs it, whatever its kind, from the pod counts written in the object (a Job's
`parallelism`, a Volcano Job's `tasks[].replicas`, a Kubeflow PyTorchJob's or MPIJob's replica specs, a JobSet's
`replicatedJobs`, a LeaderWorkerSet's `size`, a Deployment's or StatefulSet's `replicas`):

- **error**: `--nproc-per-node N` with more ranks than the accelerators the container gets (each rank takes one
  device: the extra ranks fail with an invalid device ordinal);
- **error**: `--nnodes N` (a fixed count) where the workload runs another number of pods (fewer: rendezvous waits
  for nodes that never come; more: the extra pods join no group), or outside `MIN:MAX`;
- **warning**: a workload of several pods whose torchrun names no `--nnodes` and is not `--standalone`, where no
  operator supplies the count (a Kubeflow PyTorchJob or TrainJob sets `PET_NNODES`, which torchrun reads; so does
  an explicit `PET_NNODES` in the container's env): torchrun then takes 1, and every pod trains alone;
- **error**: `accelerate launch --num_processes N --num_machines M` (N is the total over the machines) with more
  processes per machine than the container's accelerators, or `--num_machines` where the workload runs another
  number of pods;
- **error**: `mpirun -np N` in an MPIJob with more ranks than `slotsPerWorker` x workers (mpirun refuses to start
  without `--oversubscribe`); fewer is a warning (slots, and their GPUs, sit idle);
- **warning**: a container that starts one Python program and no launcher while its literal env puts every rank
  in the pod (`MASTER_ADDR` localhost) with a `WORLD_SIZE` above one: a process group initialised from the
  environment waits for ranks nobody starts (assumed: the program starts no process per GPU of its own, as
  `torch.multiprocessing.spawn` would). A replica's several GPUs with one process are not judged: the program may
  spawn a process per GPU or drive them all from one (`DataParallel`);
- **warning**: several copies of one pod with no index (a Job that is not Indexed, a Deployment's replicas), no
  launcher, a literal `WORLD_SIZE` above one with a `MASTER_ADDR` outside the pod, and nothing that numbers the
  pods (no env named like a rank or an index but a literal one, none in the command, no `envFrom`): every copy
  takes the same rank (assumed: the program reads its rank from `RANK`, as `torch.distributed`'s `env://`
  initialisation does);
- single pods (bare Pods, workloads of one pod) without a launcher that meet at one literal `MASTER_ADDR` and
  `MASTER_PORT`, each with a literal `WORLD_SIZE` and `RANK`: **error** where they state different world sizes, two
  claim one rank, or a rank is outside the world; **warning** where ranks of the world are in no pod of the files
  (assumed: no file outside them starts those). One such pod alone is not judged: the others may be applied apart.

Values written as variables (`$NNODES`, `$(WORLD)`) are read from the container's literal env; a value that stays
unknown is not judged.

## Why is this bad?
A world size that disagrees with the pods fails at the first collective, hangs in rendezvous until a timeout, or
— worst — runs: N pods each training alone on 1/N of the data, writing N diverging checkpoints, with GPUs paid for
a distributed run.

## Example
```yaml
kind: PyTorchJob            # 2 workers x 8 GPUs
  containers:
    - command: [torchrun, --nnodes=4, --nproc-per-node=8, train.py]
```
Use instead:
```yaml
    - command: [torchrun, --nnodes=2, --nproc-per-node=8, train.py]
```

## Fix
Make `--nnodes` the number of pods the workload runs and `--nproc-per-node` the accelerators each pod gets (or
leave both to the operator's `PET_*` environment), and `-np` the MPIJob's slots x workers.
"""

# A launcher run by name or by its path (`/opt/amazon/openmpi/bin/mpirun`, `/opt/conda/bin/torchrun`).
_RUNS = r"(?:^|[\s;&|(])(?:[^\s;&|()'\"]*/)?"
TORCHRUN = re.compile(_RUNS + r"(?:torchrun|python[\d.]*\s+-m\s+torch\.distributed\.(?:run|launch))\b(.*)")
MPIRUN = re.compile(_RUNS + r"(?:mpirun|mpiexec)\b(.*)")
ACCELERATE = re.compile(_RUNS + r"accelerate\s+launch\b(.*)")
OPERATOR_COUNTS = ("PyTorchJob", "TrainJob", "ElasticJob")  # operators that set PET_NNODES for torchrun


def _run(pattern: re.Pattern, text: str) -> re.Match | None:
    """The first place the script runs the launcher: not a mention in a message (`echo "Launching torchrun..."`,
    inside quotes on its line) or in a comment (`# ... injected by torchrun`, a heredoc's Python included)."""
    for m in pattern.finditer(text):
        line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if (line.count('"') % 2 or line.count("'") % 2 or "#" in line or re.search(r"\b(?:echo|printf)\b", line)):
            continue
        return m
    return None


def _flags(rest: str) -> dict[str, str]:
    """--name value / --name=value / -np value of one launcher line (up to its script)."""
    try:
        words = split_words(rest.split("\n")[0])
    except ValueError:
        words = rest.split()
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        if w.endswith((".py", ".sh")) or (w and not w.startswith("-") and i and not words[i - 1].startswith("-")):
            break  # the training script and its own arguments follow
        if w.startswith("-"):
            name, eq, value = w.lstrip("-").partition("=")
            out[name.replace("_", "-")] = value if eq else (words[i + 1] if i + 1 < len(words)
                                                             and not words[i + 1].startswith("-") else "")
    return out


def _resolve(value: str, env: dict[str, str]) -> str:
    m = re.fullmatch(r"\$\(?\{?(\w+)\}?\)?", value.strip())
    return env.get(m.group(1), "") if m else value


def _int(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def _pods(obj: dict) -> int | None:
    """How many pods the workload runs, from the counts written in it (None: not written, or not a number)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    kind = obj.get("kind")
    counts: list = []
    if kind == "Job" and "tasks" in spec:  # Volcano
        counts = [t.get("replicas", 1) for t in spec.get("tasks") or [] if isinstance(t, dict)]
    elif kind == "Job":
        counts = [spec.get("parallelism", 1)]
    elif kind in ("Deployment", "StatefulSet"):
        counts = [spec.get("replicas", 1)]
    elif kind == "LeaderWorkerSet":
        counts = [((spec.get("leaderWorkerTemplate") or {}).get("size", 1))]
    elif kind == "JobSet":
        counts = [(r.get("replicas", 1) or 1) * (((r.get("template") or {}).get("spec") or {}).get("parallelism", 1))
                  for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)]
    else:
        for key, groups in spec.items():
            if key.endswith("ReplicaSpecs") and isinstance(groups, dict):
                counts += [g.get("replicas", 1) for g in groups.values() if isinstance(g, dict)]
    if not counts or not all(isinstance(n, int) and not isinstance(n, bool) for n in counts):
        return None
    return sum(counts)


def check(ctx) -> Iterator[Hit]:
    yield from _separate_ranks(ctx)
    for o, pod_path, pod in ctx.pod_templates():
        pods = _pods(o.obj)
        for field, i, c in containers(pod):
            if field != "containers":
                continue
            text = _command_text(c)
            env = literal_env(c)
            who = f"{o.kind} {o.name}: container {c.get('name', i)}"
            torch, accelerate, mpi = _run(TORCHRUN, text), _run(ACCELERATE, text), _run(MPIRUN, text)
            if torch:
                where = _key(c, f"{pod_path}.{field}.{i}", "torch")
                yield from _torchrun(o, where, who, _flags(torch.group(1)), env, c, pods)
            if accelerate:
                where = _key(c, f"{pod_path}.{field}.{i}", "accelerate")
                yield from _accelerate(o, where, who, _flags(accelerate.group(1)), env, c, pods)
            if mpi and o.kind == "MPIJob":
                where = _key(c, f"{pod_path}.{field}.{i}", "mpi")
                yield from _mpirun(o, where, who, _flags(mpi.group(1)), env)
            if not (torch or accelerate or mpi):
                if len(PYTHON.findall(text)) == 1:  # several: one per rank, maybe
                    yield from _one_process(o, f"{pod_path}.{field}.{i}", who, env)
                yield from _no_rank(o, f"{pod_path}.{field}.{i}", who, env, c, text, pods)


def _command_text(c: dict) -> str:
    """The container's command and args as one text, a script's continued lines joined into one command."""
    return argv(c).replace("\\\n", " ")


def _launched(text: str) -> bool:
    return bool(TORCHRUN.search(text) or ACCELERATE.search(text) or MPIRUN.search(text))


# A Python program started without a launcher: one process, whatever GPUs its container holds.
PYTHON = re.compile(r"(?:^|[\s;&|(/])python[\d.]*\s+(?!-m\s+(?:torch\.distributed|accelerate|deepspeed))")


def _one_process(o, where: str, who: str, env: dict) -> Iterator[Hit]:
    """A container that starts one Python process and no launcher, whose literal env puts the rendezvous in the pod
    itself (MASTER_ADDR localhost) with a WORLD_SIZE above one: the process group waits for ranks nobody starts."""
    world = _int(env.get("WORLD_SIZE", ""))
    if world and world > 1 and env.get("MASTER_ADDR", "").strip() in LOOPBACK_HOSTS:
        yield Hit(f"{where}.env", f"{who} sets WORLD_SIZE {world} with MASTER_ADDR {env['MASTER_ADDR']} (every rank "
                  "in this pod) but starts one Python process, with no launcher: a process group initialised from "
                  f"the environment waits for {world - 1} rank(s) that are never started (assumed: the program starts "
                  "no process per GPU of its own, as torch.multiprocessing.spawn would)", obj=o,
                  severity=Severity.WARNING,
                  remediation="start the program with torchrun --nproc-per-node (it sets WORLD_SIZE and RANK for each "
                              "rank), or set WORLD_SIZE to the processes it starts")


# Kinds whose pods are copies of one template with no index of their own: a batch Job that is not Indexed, a
# Deployment's or ReplicaSet's replicas (a StatefulSet's ordinal hostname, an Indexed Job's JOB_COMPLETION_INDEX,
# an operator's RANK/PET_* env give each pod its place).
UNINDEXED = frozenset({"Job", "Deployment", "ReplicaSet"})
# Env names that give a process its place in the group.
RANK_NAMES = re.compile(r"RANK|INDEX|ORDINAL", re.IGNORECASE)


def _no_rank(o, where: str, who: str, env: dict, c: dict, text: str, pods: int | None) -> Iterator[Hit]:
    """Several copies of one pod, no launcher, a literal WORLD_SIZE above one and a rendezvous outside the pod, and
    nothing that gives a pod its rank: every copy takes the same rank (torch.distributed's env:// reads RANK)."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    if o.kind not in UNINDEXED or "tasks" in spec or spec.get("completionMode") == "Indexed" or not pods or pods < 2:
        return
    world = _int(env.get("WORLD_SIZE", ""))
    master = env.get("MASTER_ADDR", "").strip()
    if not world or world < 2 or not master or master in LOOPBACK_HOSTS:
        return
    computed = [str(e.get("name")) for e in c.get("env") or [] if isinstance(e, dict) and "value" not in e]
    if any(RANK_NAMES.search(n) for n in computed) or RANK_NAMES.search(text) or c.get("envFrom"):
        return
    same = next((f"{n} is {v} in every copy" for n, v in env.items() if RANK_NAMES.search(n)),
                "no RANK env, no launcher, no index")
    yield Hit(f"{where}.env", f"{who} sets WORLD_SIZE {world} and MASTER_ADDR {master} in the {pods} copies of one "
              f"pod that {o.kind} {o.name} runs, but nothing gives a pod its own rank ({same}): every copy takes "
              "the same rank and the group never forms (assumed: the program reads its rank from RANK, as "
              "torch.distributed's env:// initialisation does)", obj=o, severity=Severity.WARNING,
              remediation="run the pods as an Indexed Job and set RANK from JOB_COMPLETION_INDEX (or start them "
                          "with torchrun --nnodes and a c10d rendezvous, which numbers them)")


def _separate_ranks(ctx) -> Iterator[Hit]:
    """Single pods (a bare Pod, a workload of one pod) that meet at one literal MASTER_ADDR and MASTER_PORT, each
    with a literal WORLD_SIZE and RANK and no launcher: the ranks they state must be those of one world."""
    worlds: dict[tuple[str, str], list] = {}
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind != "Pod" and _pods(o.obj) != 1:
            continue
        for field, i, c in containers(pod):
            if field != "containers" or _launched(_command_text(c)):
                continue
            env = literal_env(c)
            ranked = torch_rank(env)
            if ranked and ranked[2] not in LOOPBACK_HOSTS:
                world, rank, master = ranked
                worlds.setdefault((master, env.get("MASTER_PORT", "")), []).append(
                    (o, f"{pod_path}.{field}.{i}", f"{o.kind} {o.name}: container {c.get('name', i)}", world, rank))
    for (master, _port), members in worlds.items():
        if len(members) < 2:
            continue  # one pod of the world in these files: the others may be applied apart
        sizes = {m[3] for m in members}
        ranks = sorted(m[4] for m in members)
        names = ", ".join(f"{m[0].kind} {m[0].name}" for m in members)
        world = members[0][3]
        if len(sizes) > 1:
            why = f"state different WORLD_SIZEs ({', '.join(map(str, sorted(sizes)))})"
            severity, assumed = None, ""
        elif len(set(ranks)) < len(ranks) or ranks[-1] >= world:
            why = (f"state RANKs {', '.join(map(str, ranks))} in a world of {world}: two claim one rank, or one is "
                   "outside it")
            severity, assumed = None, ""
        elif len(ranks) < world:
            missing = sorted(set(range(world)) - set(ranks))
            why = (f"are {len(ranks)} of a world of {world}; rank(s) {', '.join(map(str, missing))} are in no pod "
                   "of these files")
            severity, assumed = Severity.WARNING, " (assumed: no file outside these starts them)"
        else:
            continue
        for o, where, who, _world, _rank in members:  # each pod's manifest states the world it waits for
            yield Hit(f"{where}.env", f"{who}: the pods that meet at {master} ({names}) {why}, so the process "
                      f"group never forms{assumed}", obj=o, severity=severity,
                      remediation="give each rank of the world one pod, with WORLD_SIZE the number of pods and "
                                  "RANK 0 to WORLD_SIZE-1 (or run them as an Indexed Job with RANK from the "
                                  "completion index)")


def _key(c: dict, base: str, word: str) -> str:
    """The container's `command` or `args`, whichever names the launcher."""
    command = c.get("command") if isinstance(c.get("command"), list) else []
    return f"{base}.command" if any(word in str(w) for w in command) else f"{base}.args"


def _torchrun(o, where: str, who: str, flags: dict, env: dict, c: dict, pods: int | None) -> Iterator[Hit]:
    devices = sum(accelerators_asked(c).values())
    nproc = _int(_resolve(flags.get("nproc-per-node", ""), env))
    if nproc and devices and nproc > devices:
        yield Hit(where, f"{who} starts torchrun with --nproc-per-node {nproc}, but the container gets {devices:g} "
                  "accelerator(s): each rank takes one, and the extra ranks fail", obj=o)
    nnodes = _resolve(flags.get("nnodes", ""), env)
    if nnodes and pods is not None:
        low, _, high = nnodes.partition(":")
        lo, hi = _int(low), _int(high or low)
        if lo is not None and hi is not None and not lo <= pods <= hi:
            yield Hit(where, f"{who} starts torchrun with --nnodes {nnodes}, but {o.kind} {o.name} runs {pods} pod(s): "
                      "rendezvous waits for nodes that never come, or the extra pods join no group", obj=o)
    elif "nnodes" not in flags and "standalone" not in flags and pods and pods > 1 \
            and o.kind not in OPERATOR_COUNTS and "PET_NNODES" not in env:
        yield Hit(where, f"{who} starts torchrun without --nnodes in a workload of {pods} pods, and no operator sets "
                  "PET_NNODES: torchrun takes 1 node, so every pod trains alone", obj=o, severity=Severity.WARNING)


def _accelerate(o, where: str, who: str, flags: dict, env: dict, c: dict, pods: int | None) -> Iterator[Hit]:
    """`accelerate launch`: --num_processes is the total over all machines (--num_machines, default 1)."""
    devices = sum(accelerators_asked(c).values())
    total = _int(_resolve(flags.get("num-processes", ""), env))
    machines = _int(_resolve(flags.get("num-machines", "1") or "1", env))
    if total and machines and devices and total > machines * devices:
        yield Hit(where, f"{who} runs accelerate launch with --num_processes {total} on {machines} machine(s), "
                  f"{-(-total // machines)} per machine, but the container gets {devices:g} accelerator(s): each "
                  "process takes one, and the extra ones fail", obj=o)
    if "num-machines" in flags and machines and pods is not None and machines != pods:
        yield Hit(where, f"{who} runs accelerate launch with --num_machines {machines}, but {o.kind} {o.name} runs "
                  f"{pods} pod(s): the launch waits for machines that never come, or the extra pods join no group",
                  obj=o)


def _mpirun(o, where: str, who: str, flags: dict, env: dict) -> Iterator[Hit]:
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    workers = ((spec.get("mpiReplicaSpecs") or {}).get("Worker") or {}).get("replicas")
    slots = spec.get("slotsPerWorker", 1)
    np_ = _int(_resolve(flags.get("np", flags.get("n", "")), env))
    if not (isinstance(workers, int) and isinstance(slots, int) and np_):
        return
    if np_ > workers * slots:
        yield Hit(where, f"{who} runs mpirun -np {np_}, but the MPIJob has {workers} worker(s) x {slots} slot(s) "
                  f"= {workers * slots}: mpirun refuses to start without --oversubscribe", obj=o)
    elif np_ < workers * slots:
        yield Hit(where, f"{who} runs mpirun -np {np_} on {workers} worker(s) x {slots} slot(s) = {workers * slots}: "
                  f"{workers * slots - np_} slot(s) and their devices sit idle", obj=o, severity=Severity.WARNING)
