"""Refuses to serve a merged model that was not produced from the run being evaluated.

Runs as the vLLM pod's init container (standard library only) against the read-only model mount:
  check_provenance.py MODEL_DIR   with EXPECTED_RUN (JSON) and EXPECTED_STEP in the environment.
Exit 0 when MODEL_DIR/grpo-provenance.json names this run and step; 1 otherwise, with one line saying why.
"""

import json
import os
import sys

PROVENANCE = "grpo-provenance.json"


def check(model_dir: str, expected_run: dict, expected_step: int) -> str | None:
    path = os.path.join(model_dir, PROVENANCE)
    try:
        with open(path, encoding="utf-8") as f:
            prov = json.load(f)
    except FileNotFoundError:
        return f"{path}: no provenance file; merge the checkpoint with `grpo-eval merge`"
    except (OSError, ValueError) as exc:
        return f"{path}: unreadable provenance: {exc}"
    if not isinstance(prov, dict) or not isinstance(prov.get("run"), dict):
        return f"{path}: not a grpo-eval provenance file"
    step = (prov.get("source") or {}).get("step")
    if step != expected_step:
        return f"{path}: merged from step {step!r}, this release evaluates step {expected_step}"
    for key in sorted(set(expected_run) | set(prov["run"])):
        want, got = expected_run.get(key), prov["run"].get(key)
        if want != got:
            return f"{path}: run.{key} is {got!r}, this release's run has {want!r}"
    return None


def main() -> int:
    problem = check(sys.argv[1], json.loads(os.environ["EXPECTED_RUN"]), int(os.environ["EXPECTED_STEP"]))
    if problem:
        print(f"[provenance] REFUSED: {problem}", file=sys.stderr)
        return 1
    print(f"[provenance] {sys.argv[1]} was merged from this run, step {os.environ['EXPECTED_STEP']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
