"""Running grpo-lint / grpo-render on one input, in-process or through the console scripts, with a time bound."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Per input. The shipped files lint in ~0.1 s; a hang (a FIFO read, an unbounded search) is what this catches,
# so the bound is generous for a loaded 2-core CI machine.
TIME_BOUND_S = 20
# A bad value is quoted as a bounded excerpt: the whole output for one input stays small.
MAX_OUTPUT_CHARS = 100_000
BIN = Path(sys.executable).parent


class Hang(Exception):
    pass


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def text(self) -> str:
        return self.out + self.err

    def error_key_paths(self) -> list[str | None]:
        """key_path of every input error in grpo-lint --format json output."""
        try:
            return [e.get("key_path") for e in json.loads(self.out)["input_errors"]]
        except (ValueError, KeyError):
            return []


def in_process(main, argv: list[str]) -> Outcome:
    """Call a CLI's main() with stdout/stderr captured, interrupted after TIME_BOUND_S."""
    out, err = io.StringIO(), io.StringIO()

    def alarm(signum, frame):
        raise Hang(f"{argv} ran longer than {TIME_BOUND_S} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIME_BOUND_S)
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(code, out.getvalue(), err.getvalue(), time.monotonic() - start)


def console(script: str, argv: list[str], cwd: str | None = None) -> Outcome:
    """Run an installed console script (grpo-lint, grpo-render) from this venv as a user would."""
    start = time.monotonic()
    try:
        proc = subprocess.run([str(BIN / script), *argv], capture_output=True, text=True, errors="replace",
                              timeout=TIME_BOUND_S + 30, cwd=cwd, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise Hang(f"{script} {argv} ran longer than {TIME_BOUND_S + 30} s") from None
    return Outcome(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def check(outcome: Outcome, where: str) -> None:
    """What every input must give: a defined exit code, no traceback, bounded error output (a rendered job
    command that contains a long value is output, not an error echo)."""
    assert outcome.code in (0, 1, 2), f"{where}: exit {outcome.code}\n{outcome.text[-3000:]}"
    assert "Traceback" not in outcome.text, f"{where}:\n{outcome.text[-3000:]}"
    shown = outcome.text if outcome.code else outcome.err
    assert len(shown) < MAX_OUTPUT_CHARS, f"{where}: {len(shown)} characters of output"


def related(error_path: str | None, mutated: str) -> bool:
    """An error is located at the mutated key when it names that key path, a key inside the mutated value, or a
    sibling key: a switch that changes which of its siblings apply (useDynamicBsz, colocate, reward.kind) is
    answered at the sibling that no longer applies, whose message names the switch."""
    if error_path is None:
        return False
    if error_path == mutated or error_path.startswith(mutated + "."):
        return True
    parent = mutated.rsplit(".", 1)[0] if "." in mutated else ""
    return bool(parent) and error_path.rsplit(".", 1)[0] == parent
