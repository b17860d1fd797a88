"""Fixtures for the miles tier: the miles venv, the staged storage of each case, the worker run once per session."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from ..tier_venvs import venv_path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SETUP_SCRIPT = HERE / "setup_miles_venv.sh"
MARKER_NAME = ".grpo-miles-installed"
SKIP_ENV = "GRPO_SKIP_MILES"
WORKER = HERE / "miles_worker.py"
WORKER_TIMEOUT_S = 1500


def pytest_configure(config):
    config.addinivalue_line("markers", "miles: radixark/miles' own parser, data loading and reward dispatch")


def miles_venv() -> Path:
    return venv_path("miles")


def miles_python() -> Path:
    """The miles venv's interpreter. Missing: a failure, never a skip; GRPO_SKIP_MILES=1 skips, except under CI."""
    if os.environ.get(SKIP_ENV) == "1" and os.environ.get("CI") != "true":
        pytest.skip(f"{SKIP_ENV}=1: miles tier skipped on request")
    venv = miles_venv()
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / MARKER_NAME).exists()):
        pytest.fail(f"miles venv missing at {venv}; create it with `make miles` (bash "
                    f"{SETUP_SCRIPT.relative_to(REPO_ROOT)} with MILES_VENV set)", pytrace=False)
    return python


def run_worker(python: Path, cases: list[dict]) -> list[dict]:
    proc = subprocess.run([str(python), str(WORKER)], input=json.dumps({"cases": cases}), capture_output=True,
                          text=True, timeout=WORKER_TIMEOUT_S, cwd=REPO_ROOT)
    lines = [line for line in proc.stdout.splitlines() if line.startswith('{"results"')]
    assert proc.returncode == 0 and lines, f"miles worker failed ({proc.returncode}):\n{proc.stderr[-6000:]}"
    return json.loads(lines[-1])["results"]


def build_model_dir(python: Path, out: Path, hf_config: dict) -> None:
    """config.json with the model's architecture fields and a byte-level tokenizer with Qwen's chat format (the
    start-up tier's), written by transformers in the miles venv: miles' own AutoConfig / tokenizer loading reads it."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from tests.startup.build_fixtures import build_tokenizer; out = Path(sys.argv[2]); "
            "out.mkdir(parents=True, exist_ok=True); build_tokenizer(out); "
            "(out / 'config.json').write_text(sys.argv[3])")
    subprocess.run([str(python), "-c", code, str(REPO_ROOT), str(out), json.dumps(hf_config)], check=True,
                   capture_output=True, timeout=600)


def _code(answer: str) -> str:
    return f"<think>read, add, print</think>\n```python\n{answer}\n```"


def _math(answer: str) -> str:
    return f"<think>working it out</think>\nThe answer is \\boxed{{{answer}}}."


# Responses the tests score, by what a right and a wrong answer to each staged problem look like.
RESPONSES = {
    "What is 1+1?": (_math("2"), _math("3")),
    "What is 2+3?": (_math("5"), _math("6")),
    "Find the remainder when 2024 is divided by 1000.": (_math("24"), _math("25")),
    "Read two integers and print their sum.": (_code("a, b = map(int, input().split())\nprint(a + b)"),
                                               _code("a, b = map(int, input().split())\nprint(a - b)")),
}
ROLLOUTS = 3  # the step-metrics case's rollouts


def rollout_batches(case) -> list[list[dict]]:
    """The step-metrics case's rollouts: rollout r answers each staged training row twice, r + 1 of its four
    responses right, each with reasoning of its own length, so that no two rollouts have the same mean reward or
    mean response length. `expect` is the reward the reward service gives the response."""
    from .cases import rows

    train = rows(case.on_storage(case.job["data"]["trainFiles"][0]))
    out = []
    for r in range(ROLLOUTS):
        batch = []
        for k in range(4):
            i = k % len(train)
            right, wrong = RESPONSES[train[i]["metadata"]["problem"]]
            response, expect = (right, 1) if k <= r else (wrong, 0)
            response = response.replace("<think>", "<think>" + "check it again. " * (3 * r + k), 1)
            batch.append({"index": i, "response": response, "expect": expect})
        out.append(batch)
    return out


def fed_batches(case) -> list[list[dict]]:
    """What the worker is given of each rollout: the training row and the response."""
    return [[{k: r[k] for k in ("index", "response")} for r in batch] for batch in rollout_batches(case)]


MUTATIONS = ("mutation-no-rm-type", "mutation-bare-label", "unknown-source")
CAPTURE = "capture-miles-request"


class Capture:
    """A loopback /score that records each JSON body miles posts and answers as the reward service does."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        bodies = self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                data = json.dumps({"reward": 1.0, "status": "ok"}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/score"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Capture:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def score_requests(case, which: str = "both") -> list[dict]:
    """Every staged train and eval row, once with its right answer and once with a wrong one."""
    from .cases import rows

    out = []
    files = {"train": case.on_storage(case.job["data"]["trainFiles"][0]),
             "eval": case.on_storage(case.job["data"]["valFiles"][0])}
    for dataset, path in files.items():
        if which != "both" and dataset != which:
            continue
        for i, row in enumerate(rows(path)):
            problem = row["metadata"]["problem"]
            right, wrong = RESPONSES[problem]
            out += [{"dataset": dataset, "index": i, "response": right, "expect": 1, "problem": problem},
                    {"dataset": dataset, "index": i, "response": wrong, "expect": 0, "problem": problem}]
    return out


@pytest.fixture(scope="session")
def miles_runs(tmp_path_factory):
    """name -> (Case, the worker's result, the requests scored, the sandbox stub or None), for every case, from one
    worker process (miles' imports take most of its time)."""
    import contextlib

    import grpo_stack.job.miles as builder

    from tests.reward.reward_harness import ServiceProcess
    from tests.reward.sandbox_stub import SandboxStub

    from . import cases as c

    python = miles_python()
    tmp = tmp_path_factory.mktemp("miles")

    def run_data(*argv: str) -> None:
        from grpo_stack.cli.data import main

        assert main([*argv, "--cache-dir", str(tmp / "hf-cache"), "--no-progress"]) == 0, argv

    built = {name: c.make_case(name, tmp) for name in c.VARIANTS}
    # The mutation checks: the builder without the reward type, and the label layout miles used to get (the bare
    # answer under --label-key, no data_source in it).
    mutated = {}
    base = c.make_case("miles-qwen3-4b", tmp / "mutations")
    base.name = "mutation-no-rm-type"
    argv = base.built.argv()
    i = argv.index("--rm-type")
    base.built = dataclasses.replace(base.built, args=tuple(a for a in base.built.args if a.key != "rm-type"))
    assert "--rm-type" not in base.built.argv() and argv[i + 1] == "remote_rm"
    mutated[base.name] = base
    original = dict(builder.MILES_LABEL_KEYS)
    builder.MILES_LABEL_KEYS["service"] = original["builtin"]
    try:
        bare = c.make_case("miles-qwen3-4b", tmp / "mutation-bare-label")
    finally:
        builder.MILES_LABEL_KEYS.update(original)
    bare.name = "mutation-bare-label"
    mutated[bare.name] = bare
    unknown = c.make_case("miles-qwen3-4b", tmp / "unknown-source")
    unknown.name = "unknown-source"
    mutated[unknown.name] = unknown
    capture = c.make_case("miles-qwen3-4b", tmp / CAPTURE)
    capture.name = CAPTURE
    mutated[CAPTURE] = capture
    every = {**built, **mutated}
    models: dict[str, Path] = {}
    for case in every.values():
        c.stage(case, python, run_data, models)

    with contextlib.ExitStack() as stack:
        sandbox = stack.enter_context(SandboxStub())
        captured = stack.enter_context(Capture())
        requests, worker_cases, sandboxes, services = {}, [], {}, {}
        for name, case in every.items():
            rm_host = None
            if name == CAPTURE:
                rm_host = {"from": c.host_port(case.flag("--rm-url")), "to": c.host_port(captured.url)}
            elif case.kind != "builtin":
                env = c.reward_service_env(case)
                if name == "unknown-source":
                    env["REWARD_ROUTES"] = json.dumps({"math_dapo": "math"})
                if "REWARD_SANDBOX_URL" in env:
                    env["REWARD_SANDBOX_URL"] = sandbox.url
                    sandboxes[name] = sandbox
                config = {k: v for k, v in env.items() if k.startswith("REWARD_")} | {"REWARD_WORKERS": "1"}
                key = json.dumps(config, sort_keys=True)
                if key not in services:  # one server per distinct rendered configuration
                    (tmp / f"service-{len(services)}").mkdir()
                    services[key] = stack.enter_context(ServiceProcess(config, tmp / f"service-{len(services)}"))
                service = services[key]
                rm_host = {"from": c.host_port(case.flag("--rm-url")), "to": c.host_port(service.url)}
            requests[name] = score_requests(case, "eval" if name == "unknown-source" else "both")
            if name == CAPTURE:
                requests[name] = requests[name][:1]
            worker_cases.append({"argv": case.argv(), "env": dict(case.built.env), "rm_host": rm_host,
                                 "gpu": {**c.GPU, "count": int(case.spec["cluster"]["gpusPerNode"])},
                                 "score": [{k: r[k] for k in ("dataset", "index", "response")}
                                           for r in requests[name]],
                                 **({"metrics": {"rollouts": fed_batches(case)}} if name == c.STEP_METRICS_CASE
                                    else {})})
        results = run_worker(python, worker_cases)
    out = {name: (case, result, requests[name], sandboxes.get(name))
           for (name, case), result in zip(every.items(), results, strict=True)}
    out[CAPTURE] = (*out[CAPTURE][:3], captured.bodies)
    return out

