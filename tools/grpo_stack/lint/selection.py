"""`--select` / `--ignore` as given: the result cache keys on the words, and only a miss imports the rule registry
to expand them into codes (a warm hit answers without loading a rule)."""

from __future__ import annotations

from dataclasses import dataclass


class SelectionError(ValueError):
    """A `--select` / `--ignore` entry that names no rule, code prefix or category."""


def _words(arg: str | None) -> tuple[str, ...]:
    return tuple(sorted({w.strip() for w in (arg or "").split(",") if w.strip()}))


@dataclass(frozen=True)
class Selection:
    select: str | None = None
    ignore: str | None = None

    def key(self) -> list | None:
        """What the cache keys on: the entries of each option (order and repeats do not change the codes)."""
        if not self.select and not self.ignore:
            return None
        return [list(_words(self.select)), list(_words(self.ignore))]

    def codes(self) -> frozenset[str] | None:
        """The codes to run (None: every rule); SelectionError names an entry that matches nothing."""
        if self.key() is None:
            return None
        from .rules import selection

        try:
            return selection(self.select, self.ignore)
        except ValueError as exc:
            raise SelectionError(str(exc)) from None
