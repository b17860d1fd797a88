"""Run with the start-up venv's interpreter (vllm installed): a container's args through vLLM's own `vllm serve` CLI.

Run it with the container's env only (the caller passes no test-session variables: `HF_HUB_OFFLINE=1` would make
vLLM resolve the model directory, absent here, as a Hub id at import).
stdin: {"cases": [{"args": [...], "env": {"NAME": "value"}}, ...]}; argv[1]: where to write {"vllm": version,
"cases": [{"exit": code, "engine": {...}, "api": {...}, "warnings": [...], "error": "..."}, ...]} (vLLM logs to
stdout).

The image's ENTRYPOINT is `vllm serve` (vllm-project/vllm docker/Dockerfile, final `vllm-openai` stage), so the
container's args follow `serve` on vLLM's own command line: vLLM's `main()` parses and validates them with its own
parser; only the serve subcommand's dispatch (which would start the engine on a GPU) is replaced by one that keeps
the parsed namespace. From it vLLM's own `AsyncEngineArgs.from_cli_args` builds the engine arguments, and the
container's env meets vLLM's own `validate_environ(hard_fail=True)`. Where it stops: there is no GPU here, so the
parser's device-dependent defaults are those of vLLM's CPU platform (the swap vLLM's own `main()` makes for `vllm
bench`); `create_engine_config` (it reads the model's config.json and probes the device) and the server itself do
not run.
"""

from __future__ import annotations

import json
import logging
import os
import sys

ENGINE_FIELDS = ("model", "served_model_name", "tensor_parallel_size", "max_model_len", "gpu_memory_utilization",
                 "enforce_eager", "trust_remote_code")


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


def check(case: dict, vllm_main, serve, engine_args, envs, caught: _Warnings) -> dict:
    """One container: its args on vLLM's command line after `serve`, its env through vLLM's env check."""
    report: dict = {"exit": 0, "engine": {}, "api": {}, "warnings": [], "error": ""}
    caught.seen = []
    parsed: list = []
    serve.ServeSubcommand.cmd = staticmethod(parsed.append)
    sys.argv = ["vllm", "serve", *case["args"]]
    saved_env = dict(os.environ)
    os.environ.update(case.get("env", {}))  # the pod's process sees its env from the start
    try:
        vllm_main()
        if not parsed:
            raise SystemExit("vLLM's CLI did not reach the serve subcommand")
        args = parsed[0]
        if getattr(args, "model_tag", None) is not None:  # what ServeSubcommand.cmd does first
            args.model = args.model_tag
        engine = engine_args.from_cli_args(args)
        report["engine"] = {name: getattr(engine, name) for name in ENGINE_FIELDS}
        report["api"] = {"host": args.host, "port": args.port}
        envs.validate_environ(hard_fail=True)
    except SystemExit as stop:  # argparse refuses with exit 2
        report["exit"] = stop.code if isinstance(stop.code, int) else 2
        report["error"] = "" if isinstance(stop.code, int) else str(stop.code)
    except (ValueError, TypeError) as error:
        report["exit"], report["error"] = 2, f"{type(error).__name__}: {error}"
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
    report["warnings"] = list(caught.seen)
    return report


def main(out_path: str) -> None:
    import vllm
    from vllm import platforms

    if platforms.current_platform.is_unspecified():
        # No GPU here: the parser's defaults need a device type. vLLM's own main() makes the same swap for
        # `vllm bench` on a machine without one.
        from vllm.platforms.cpu import CpuPlatform

        platforms.current_platform = CpuPlatform()
    import vllm.entrypoints.cli.serve as serve
    import vllm.envs as envs
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.cli.main import main as vllm_main

    caught = _Warnings()
    logging.getLogger("vllm").addHandler(caught)
    cases = json.load(sys.stdin)["cases"]
    reports = [check(case, vllm_main, serve, AsyncEngineArgs, envs, caught) for case in cases]
    with open(out_path, "w") as out:
        json.dump({"vllm": vllm.__version__, "cases": reports}, out, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
