"""Whether a container runs a command that finishes, or only inspects its GPUs (not a rule: no CODE)."""

from __future__ import annotations

import re

from ..shell import command_name, command_words, commands_in, parse, script_in, set_changes, walk
from ._objects import argv_of

DAY = 86_400


def one_shot(c: dict) -> bool:
    """The container states a command that ends: no ports or probes, not the image's own entrypoint (it may be a
    server), no shell loop, and no sleep of a day or more or `tail -f` that idles on purpose."""
    if c.get("ports") or any(c.get(p) for p in ("readinessProbe", "livenessProbe", "startupProbe")):
        return False
    if not c.get("command"):
        return False  # arguments to the image's own entrypoint, which may be a server (`args: [/exports]`)
    argv = [*(c.get("command") or []), *(c.get("args") or [])]
    if not argv or not all(isinstance(w, str | int | float) for w in argv):
        return False  # the image's entrypoint decides: it may be a server
    argv = [str(w) for w in argv]
    script = script_in(argv)
    if script is None:
        name = argv[0].rsplit("/", 1)[-1]
        return not (_idles(name, argv[1:]) or serves(name, argv[1:]))
    tree = parse(argv[script[0]])
    if tree.root_node.has_error:
        return False
    if any(n.type in ("while_statement", "until_statement") for n in walk(tree.root_node)):
        return False
    return not any(_idles(command_name(n), command_words(n)) or serves(command_name(n), command_words(n))
                   for n in commands_in(tree.root_node))


# A flag that names where a program listens (`--port 9000`, `--ip=0.0.0.0`, `--bind-addr`, `--listen`).
LISTEN_FLAG = re.compile(r"^--(?:port|ip|host|bind|bind-addr|bind-address|listen|listen-address|http-port)(?:=|$)")
# Flags that keep a daemon in the foreground (`sshd -D` where the program is a daemon, below).
FOREGROUND_FLAGS = frozenset({"--foreground", "--nodaemon", "--no-daemon"})
# Commands that run the program named after their options (`sudo /usr/sbin/sshd -D`, `exec code-server ...`).
WRAPPERS = frozenset({"sudo", "exec", "nohup", "env", "nice", "stdbuf", "setsid"})


def serves(name: str, words: list[str]) -> bool:
    """The command is a server in the foreground, so the container does not finish: it names the port or address
    it listens on, or is a daemon (its program's name ends in d: sshd, httpd) told not to detach (`-D`,
    `--foreground`). `ray start` returns once its processes run, unless `--block`: a port flag there serves
    nothing in the foreground."""
    while name in WRAPPERS and words:
        rest = [w for w in words if not w.startswith("-") and "=" not in w]
        if not rest:
            return False
        name, words = rest[0].rsplit("/", 1)[-1], words[words.index(rest[0]) + 1:]
    if name == "ray" and "start" in words and "--block" not in words:
        return False
    if any(LISTEN_FLAG.match(w) for w in words) or FOREGROUND_FLAGS & set(words):
        return True
    return name.endswith("d") and "-D" in words


def idles_only(c: dict) -> bool:
    """The container's stated command only waits (`sleep infinity`, `tail -f /dev/null`, or a script of such waits,
    `echo`s and the shell's `trap` / `wait` around them): no process it starts listens on a port."""
    found = _stated_commands(c)
    return bool(found) and any(_idles(n, w) for n, w in found) and all(_idles(n, w) or n in IDLE_COMPANIONS
                                                                        for n, w in found)


def waits_only(c: dict) -> bool:
    """The container's stated command runs nothing but waits of any length (`sleep 1800`, `tail -f`) and the
    commands a waiting script runs beside them: it starts no program of its own."""
    found = _stated_commands(c)
    return bool(found) and all(n in ("sleep", "tail") or n in IDLE_COMPANIONS for n, _w in found) \
        and any(n in ("sleep", "tail") for n, _w in found)


# Commands a waiting script runs beside its waits: messages, and the shell's signal handler and job wait
# (`trap 'exit 0' TERM; sleep 1800 & wait`).
IDLE_COMPANIONS = frozenset({"echo", "printf", "true", "trap", "wait"})


def _stated_argv(c: dict) -> list[str] | None:
    """The container's stated command and arguments as words; None where it states no `command` (the image's
    entrypoint decides)."""
    argv = [str(w) for w in [*(c.get("command") or []), *(c.get("args") or [])] if isinstance(w, str | int | float)]
    return argv if c.get("command") and argv else None


def _stated_commands(c: dict) -> list[tuple[str, list[str]]] | None:
    """(name, words) of each command the container's stated `command` runs: itself, or those of its shell script;
    None where it states none (the image's entrypoint decides) or its script does not parse."""
    argv = _stated_argv(c)
    if argv is None:
        return None
    script = script_in(argv)
    if script is None:
        return [(argv[0].rsplit("/", 1)[-1], argv[1:])]
    tree = parse(argv[script[0]])
    if tree.root_node.has_error:
        return None
    return [(command_name(n), command_words(n)) for n in commands_in(tree.root_node)]


def idles_at_end(c: dict) -> bool:
    """The container's stated script ends, on every path, in a wait that does not end (`sleep infinity` last, an
    `if` whose every branch ends in one, a `while true` loop with no `break`): whatever ran before it, success or
    failure, the container does not exit."""
    return _idle_at_end_tree(c) is not None


def _script_ending_idle(c: dict):
    """(parsed script, its shell's flags) of a container whose stated script parses and whose last statement waits
    on every path (`_ends_idle`), else None."""
    argv = _stated_argv(c)
    script = script_in(argv) if argv is not None else None
    if script is None:
        return None
    tree = parse(argv[script[0]])
    statements = [n for n in tree.root_node.named_children if n.type != "comment"]
    if tree.root_node.has_error or not statements or not _ends_idle(statements[-1]):
        return None
    return tree, script[1]


def _idle_at_end_tree(c: dict):
    """The parsed script of a container that `idles_at_end`, else None."""
    found = _script_ending_idle(c)
    if found is None:
        return None
    tree, flags = found
    errexit = "e" in flags
    for node in commands_in(tree.root_node):
        errexit = dict(set_changes(node)).get("e", errexit)
    return None if errexit else tree  # under `set -e` a failing command before the wait exits the script


def waits_after_setup(c: dict) -> bool:
    """The container's stated script runs its commands in the foreground and then waits on every path
    (`setup.sh; sleep infinity`): nothing it started is still running to answer a request, so it serves nothing (a
    pod kept for `kubectl exec`, a test host). A command sent to the background (`server &`) may serve."""
    tree = _idle_at_end_tree(c)
    return tree is not None and not any(n.type == "&" for n in walk(tree.root_node))


def listens_on_nothing(c: dict) -> bool:
    """The container declares no port and its stated script runs its programs in the foreground, none a server
    (`serves`), then waits on every path (`sleep infinity` last): no process of it listens, whether a command before
    the wait failed or not. A script that starts anything in the background (`&`) may have started a server and is
    not judged."""
    found = None if c.get("ports") else _script_ending_idle(c)
    if found is None:
        return False
    tree = found[0]
    return (not any(n.type == "&" for n in walk(tree.root_node))
            and not any(serves(command_name(n), command_words(n)) for n in commands_in(tree.root_node)))


def _ends_idle(node) -> bool:
    body = [n for n in node.named_children if n.type != "comment"]
    if node.type == "command":
        return _idles(command_name(node), command_words(node))
    if node.type == "if_statement":
        branches = [n for n in body if n.type in ("elif_clause", "else_clause")]
        then = [n for n in body[1:] if n.type not in ("elif_clause", "else_clause")]
        if not then or not any(b.type == "else_clause" for b in branches):
            return False  # no else: the path where no condition holds goes on past the if
        tails = [then[-1]] + [([n for n in b.named_children if n.type != "comment"][1 if b.type == "elif_clause"
                                                                                       else 0:] or [None])[-1]
                              for b in branches]
        return all(t is not None and _ends_idle(t) for t in tails)
    if node.type == "while_statement":
        condition = body[0].text.decode() if body else ""
        return condition.strip() in ("true", ":") and not any(
            command_name(n) == "break" or n.type == "break_statement" for n in walk(node))
    return False


def _idles(name: str, words: list[str]) -> bool:
    """The command waits on purpose: `sleep infinity`, a sleep of a day or more, `tail -f`."""
    if name == "sleep":
        return any(w == "infinity" or _seconds(w) >= DAY for w in words)
    return name == "tail" and any(w in ("-f", "-F", "--follow") or w.startswith("--follow=") for w in words)


def _seconds(word: str) -> float:
    scale = {"s": 1, "m": 60, "h": 3600, "d": DAY}
    unit = word[-1:] if word[-1:] in scale else "s"
    number = word[:-1] if word[-1:] in scale else word
    try:
        return float(number) * scale[unit]
    except ValueError:
        return 0.0


# Programs that start no process per GPU and no collective: what a GPU smoke test runs.
NO_PEERS = frozenset({"nvidia-smi", "sleep", "deviceQuery", "vectorAdd", "echo", "true", "date", "hostname",
                      "env", "printenv", "cat", "ls", "nvcc"})


def inspects_only(c: dict) -> bool:
    """The container's stated command runs only NO_PEERS programs (its image's own entrypoint is never read so)."""
    if not c.get("command"):
        return False
    argv = argv_of(c)
    script = script_in(argv)
    if script is None:
        return bool(argv) and argv[0].rsplit("/", 1)[-1] in NO_PEERS
    tree = parse(argv[script[0]])
    names = [command_name(n).rsplit("/", 1)[-1] for n in commands_in(tree.root_node)]
    return not tree.root_node.has_error and bool(names) and all(n in NO_PEERS for n in names)


# Launchers of distributed training: each starts the ranks of one run and exits when the run ends (or fails).
LAUNCHERS = frozenset({"torchrun", "deepspeed", "mpirun", "mpiexec", "horovodrun"})
TORCH_RUN_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})


def training_launcher(c: dict) -> str | None:
    """The distributed training launcher the container's stated command runs (`torchrun`, `deepspeed`,
    `accelerate launch`, `mpirun`, `python -m torch.distributed.run`, ...), directly or in its shell script; None
    when it runs none. Such a command ends when its run does: it serves nothing and is finite work."""
    return next((found for name, words in _stated_commands(c) or [] if (found := _launcher(name, words))), None)


def _launcher(name: str, words: list[str]) -> str | None:
    if name in LAUNCHERS:
        return name
    if name == "accelerate" and words[:1] == ["launch"]:
        return "accelerate launch"
    if name.startswith("python") and "-m" in words[:-1] and words[words.index("-m") + 1] in TORCH_RUN_MODULES:
        return f"python -m {words[words.index('-m') + 1]}"
    return None
