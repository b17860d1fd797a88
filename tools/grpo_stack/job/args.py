"""An argument list where every key appears once and carries where its value came from."""

from __future__ import annotations

from dataclasses import dataclass, field


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
class BuiltJob:
    framework: str
    entrypoint: tuple[str, ...]
    args: tuple[Arg, ...]
    style: str  # "hydra" (key=value) or "flags" (--key value)
    notes: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        out = list(self.entrypoint)
        for a in self.args:
            if self.style == "hydra":
                out.append(f"{a.key}={format_hydra(a.value)}")
            elif a.value is True:
                out.append(f"--{a.key}")
            elif a.value is not False and a.value is not None:
                out.extend([f"--{a.key}", format_flag(a.value)])
        return out


def format_hydra(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ",".join(format_hydra(v) for v in value) + "]"
    return str(value)


def format_flag(value: object) -> str:
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)
