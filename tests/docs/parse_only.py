"""Run an installed console script's own argument parsing on the given words, and stop right after it.

`python parse_only.py grpo-data prepare --dataset gsm8k ...`: loads the `grpo-data` entry point this venv
installed, lets its argparse parser read the words exactly as the pod would pass them, then exits 0 printing
ARGUMENTS PARSED. A parse error exits 2 with argparse's own usage message, as the real command would.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import entry_points


def main() -> None:
    name, argv = sys.argv[1], sys.argv[2:]
    found = [e for e in entry_points(group="console_scripts") if e.name == name]
    if not found:
        sys.exit(f"no console script {name!r} installed")
    real = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        parsed = real(self, args, namespace)
        print(f"ARGUMENTS PARSED: {sorted(vars(parsed))}", flush=True)
        os._exit(0)  # before the command runs (no wrapper may turn this into another status)

    argparse.ArgumentParser.parse_args = parse_then_stop
    sys.argv = [name, *argv]
    found[0].load()()
    sys.exit(f"{name} returned without parsing its arguments")


if __name__ == "__main__":
    main()
