"""Locating findings in large inputs: the readers grpo-lint uses now beside the ones it used before.

    python bench/input_scale.py [--keys 150000] [--command-bytes 1048576]

Two inputs from the reliability report: a values file of N keys (positions of its keys: libyaml's composer in
positions.py vs ruamel's round-trip loader) and a container command of M bytes (its shell words: the regex
tokenizer vs shlex.split). Prints seconds of each and the ratio; nothing is asserted.
"""

from __future__ import annotations

import argparse
import shlex
import time


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keys", type=int, default=150_000)
    p.add_argument("--command-bytes", type=int, default=1 << 20)
    args = p.parse_args()

    from grpo_stack.lint.rules.vllm_server_gpus import SHELL_WORD
    from grpo_stack.positions import load
    from ruamel.yaml import YAML

    text = "sandbox-fusion:\n" + "".join(f"  x{i:06d}: {i}\n" for i in range(args.keys))
    new = timed(lambda: load(text))
    old = timed(lambda: YAML(typ="rt").load(text))
    print(f"positions of {args.keys} keys ({len(text)} bytes): libyaml {new:.2f} s, ruamel {old:.2f} s, "
          f"ratio {old / new:.1f}x")

    script = "echo " + "x " * (args.command_bytes // 2)
    new = timed(lambda: SHELL_WORD.findall(script))
    old = timed(lambda: shlex.split(script))
    print(f"shell words of a {len(script)}-byte command: regex {new:.2f} s, shlex {old:.2f} s, "
          f"ratio {old / new:.1f}x")


if __name__ == "__main__":
    main()
