"""An argument list where every key appears once and carries where its value came from."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import hydra


class BuildError(ValueError):
    """The job spec cannot be turned into a command (names the key path and why)."""


@dataclass(frozen=True)
class Arg:
    key: str
    value: object
    source: str  # "values: global.job.x", "cluster: ...", "preset: ...", "default: ...", "derived: ..."


@dataclass
class ArgList:
    args: list[Arg] = field(default_factory=list)

    def add(self, key: str, value: object, source: str) -> None:
        # A repeated Hydra override silently wins last (the ppo_mini_batch_size bug): refuse it here.
        if any(a.key == key for a in self.args):
            raise BuildError(f"internal: {key} would be emitted twice")
        self.args.append(Arg(key, value, source))

    def __iter__(self):
        return iter(self.args)


@dataclass(frozen=True)
class PrepareStep:
    """A job the in-pod submit runs (and waits for) before training, skipped when `output` already holds a
    manifest equal to `manifest` (plus what the submit adds from the files themselves)."""

    name: str
    argv: tuple[str, ...]
    num_gpus: int
    output: str
    manifest: dict
    why: str


@dataclass(frozen=True)
class BuiltJob:
    framework: str
    entrypoint: tuple[str, ...]
    args: tuple[Arg, ...]
    style: str  # "hydra" (key=value) or "flags" (--key value)
    notes: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # the Ray job's runtime_env env_vars
    prepare: tuple[PrepareStep, ...] = ()
    extra: tuple[str, ...] = ()  # already-checked raw tokens appended after the typed flags

    def argv(self) -> list[str]:
        out = list(self.entrypoint)
        for a in self.args:
            if self.style == "hydra":
                out.append(hydra_override(a))
            else:
                out.extend(flag_tokens(a.key, a.value))
        return out + list(self.extra)


def hydra_override(arg: Arg) -> str:
    """`key=value` in Hydra's grammar; a value Hydra would read differently is a BuildError at its values key."""
    try:
        return hydra.override(arg.key, arg.value)
    except hydra.HydraValueError as exc:
        where = arg.source.removeprefix("values: ") if arg.source.startswith("values: ") else arg.key
        raise BuildError(f"{where}: {exc}") from None


def format_hydra(value: object) -> str:
    return hydra.value_text(value)


def flag_tokens(key: str, value: object) -> list[str]:
    """argparse tokens for one flag: a list is one token per value (`--eval-prompt-data aime /x.jsonl`), never
    one space-joined string, which argparse would read as a single value."""
    if value is True:
        return [f"--{key}"]
    if value is False or value is None:
        return []
    if isinstance(value, list | tuple):
        if not value:
            raise BuildError(f"internal: --{key} has an empty value list")
        return [f"--{key}", *(format_scalar(v) for v in value)]
    return [f"--{key}", format_scalar(value)]


def format_scalar(value: object) -> str:
    if isinstance(value, bool | list | tuple | dict):
        raise BuildError(f"internal: {value!r} is not a scalar flag value")
    return str(value)
