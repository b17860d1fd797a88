"""lm-eval -> vLLM: the requests lm-eval 0.4.10's own `local-completions` client builds from the chart's task files,
against the path and model name the chart's vLLM serves, checked with vLLM's own request models.

The caller is the real one: the Job's own script (the rendered container args) runs the `lm_eval` CLI of the
lm-eval tier venv (images/lm-eval's pins) with the Job's env, on the task files of the rendered tasks ConfigMap
(every shipped task plus the chart's default list, lm-eval's own gsm8k among them), against a loopback server.
The path is the Job's COMPLETIONS_URL path, the model name must be the vLLM Deployment's `--served-model-name`,
and each request is validated against vLLM's `CompletionRequest` (tests/wires/vllm_contract.py, in the start-up
venv). Where it stops: the Hub lookups are answered locally (tests/wires/lmeval_offline: a few rows per split with
the upstream column names, and a code_eval scorer that counts nothing); vLLM's models are those of the start-up
venv's vllm, the version the chart serves (tests/wires/test_vllm_server_args.py holds them to one); the server
itself does not run.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

from tests.wires.tiers import lmeval_python, startup_python

REPO = Path(__file__).resolve().parents[2]
EVAL_RELEASE = ("values/qwen3-8b.yaml", "values/eval/eval.yaml")
TASKS_DIR = REPO / "charts/grpo-stack/charts/lm-eval/tasks"
HERE = Path(__file__).resolve().parent
# Upstream column names; lm-eval renders the prompts from these with the task files' templates.
_MBPP = {"task_id": 11, "text": "Write a function to add two numbers.", "code": "def add(a, b):\n    return a + b",
         "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(2, 2) == 4"],
         "test_setup_code": "", "challenge_test_list": []}
_HUMANEVAL = {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n    \"\"\"Add.\"\"\"\n",
              "canonical_solution": "    return a + b\n", "test": "def check(f):\n    assert f(1, 2) == 3\n",
              "entry_point": "add"}
_GSM8K = [{"question": f"Tom has {n} apples and buys one more. How many?", "answer": f"{n} + 1 = {n + 1}\n#### {n + 1}"}
          for n in range(8)]
DATASETS = {
    "openai/gsm8k:main": {"train": _GSM8K[2:], "test": _GSM8K[:2]},
    "openai/openai_humaneval": {"test": [_HUMANEVAL, {**_HUMANEVAL, "task_id": "HumanEval/1"}]},
    "google-research-datasets/mbpp:full": {"test": [_MBPP, {**_MBPP, "task_id": 12}]},
}


def shipped_tasks() -> list[str]:
    names = [(yaml.safe_load(p.read_text().replace("!function", "")) or {}).get("task")
             for p in sorted(TASKS_DIR.glob("*.yaml"))]
    return [n for n in names if n]


class _Vllm(http.server.BaseHTTPRequestHandler):
    """Serves what the chart's vLLM serves (its model name, vLLM's paths) and records every request."""

    served = ""
    completions_path = ""
    models_path = ""
    seen: list[dict] = []

    def _send(self, status: int, doc) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != self.models_path:
            return self._send(404, {"detail": "Not Found"})
        self._send(200, {"object": "list", "data": [{"id": self.served, "object": "model", "owned_by": "vllm"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Vllm.seen.append({"path": self.path, "body": body})
        if self.path != self.completions_path or body.get("model") != self.served:
            return self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        self._send(200, {"id": "cmpl-0", "object": "text_completion", "created": 0, "model": self.served,
                         "choices": [{"index": i, "text": "    return a + b\n#### 1", "logprobs": None,
                                      "finish_reason": "stop"} for i in range(len(prompts))],
                         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def release():
    user = merge_user_values([load_values_file(REPO / p) for p in EVAL_RELEASE])
    defaults = yaml.safe_load((REPO / "charts/grpo-stack/charts/lm-eval/values.yaml").read_text())["tasks"]
    tasks = list(dict.fromkeys([*(user.get("lm-eval") or {}).get("tasks", defaults), *shipped_tasks()]))
    user["lm-eval"] = {**(user.get("lm-eval") or {}), "tasks": tasks}
    return user, render(user, release="grpo-eval", namespace="ns")


def _served_model_name(rendered) -> str:
    (deploy,) = [o.obj for o in rendered.of_kind("Deployment") if o.name.endswith("-vllm")]
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    (name,) = [a.split("=", 1)[1] for a in args if a.startswith("--served-model-name=")]
    return name


@pytest.fixture(scope="module")
def lm_eval_run(release, tmp_path_factory):
    user, rendered = release
    python = lmeval_python()
    tmp = tmp_path_factory.mktemp("lmeval-wire")
    (job,) = [o.obj for o in rendered.of_kind("Job") if "lm-eval" in o.name]
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    (tasks_cm,) = [o.obj for o in rendered.of_kind("ConfigMap") if o.name.endswith("-lm-eval-tasks")]
    (tmp / "tasks").mkdir()
    for name, text in tasks_cm["data"].items():  # exactly what the pod mounts at /tasks
        (tmp / "tasks" / name).write_text(text)
    (tmp / "image-hf").mkdir()
    (tmp / "datasets.json").write_text(json.dumps(DATASETS))

    _Vllm.served, _Vllm.seen = _served_model_name(rendered), []
    _Vllm.completions_path = urlsplit(env["COMPLETIONS_URL"]).path
    _Vllm.models_path = urlsplit(env["MODELS_URL"]).path
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Vllm)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    env.update(READY_TIMEOUT_SECONDS="60", MODELS_URL=base + _Vllm.models_path,
               COMPLETIONS_URL=base + _Vllm.completions_path, HF_HOME=str(tmp / "hf"), HOME=str(tmp),
               PATH=f"{python.parent}:{os.environ['PATH']}", PYTHONPATH=str(HERE / "lmeval_offline"),
               GRPO_WIRE_DATASETS=str(tmp / "datasets.json"))
    script = (container["args"][0].replace("/eval-out", str(tmp / "out")).replace("/tasks", str(tmp / "tasks"))
              .replace("/opt/hf-home", str(tmp / "image-hf")))
    try:
        proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=900)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return user, list(_Vllm.seen)


def test_every_request_goes_to_the_served_path_and_model(lm_eval_run, release):
    user, seen = lm_eval_run
    rendered = release[1]
    assert seen, "lm-eval sent nothing"
    assert {r["path"] for r in seen} == {_Vllm.completions_path}
    assert {r["body"]["model"] for r in seen} == {_served_model_name(rendered)}
    max_response = user["global"]["job"]["lengths"]["maxResponse"]
    assert {r["body"]["max_tokens"] for r in seen} == {max_response}


def test_each_task_files_generation_settings_reach_vllm(lm_eval_run):
    """The stop sequences and temperature each shipped task file states are what vLLM is asked for, per task."""
    _user, seen = lm_eval_run
    sent = {(tuple(r["body"]["stop"]), r["body"]["temperature"]) for r in seen}
    for path in sorted(TASKS_DIR.glob("*.yaml")):
        config = yaml.safe_load(path.read_text().replace("!function", ""))
        kwargs = config.get("generation_kwargs")
        if config.get("task") and kwargs:
            assert (tuple(kwargs["until"]), kwargs["temperature"]) in sent, (path.name, sent)
    prompts = {p for r in seen for p in ([r["body"]["prompt"]] if isinstance(r["body"]["prompt"], str)
                                         else r["body"]["prompt"])}
    assert _HUMANEVAL["prompt"] in prompts and any(_MBPP["text"] in p for p in prompts)


def test_every_request_fits_vllms_completion_request(lm_eval_run, tmp_path):
    """Checked in one run of the start-up venv, with three mutations of the first request that must fail there:
    a sampling key vLLM does not know, a coerced value, a path vLLM does not serve."""
    _user, seen = lm_eval_run
    python = startup_python()
    first = seen[0]
    mutants = [({**first, "body": {**first["body"], "do_sample": True}}, "do_sample"),
               ({**first, "body": {**first["body"], "max_tokens": str(first["body"]["max_tokens"])}}, "max_tokens"),
               ({**first, "path": "/v1/complete"}, "/v1/complete")]
    out = tmp_path / "verdict.json"
    sent = json.dumps({"requests": seen + [m for m, _ in mutants]})
    proc = subprocess.run([str(python), str(HERE / "vllm_contract.py"), str(out)], input=sent, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdict = json.loads(out.read_text())
    print(f"checked {len(seen)} requests against vllm {verdict['vllm']}'s models", file=sys.stderr)
    caught = {i: [p for p in verdict["problems"] if p.startswith(f"request {i}:")] for i in range(len(seen) + 3)}
    assert [p for i in range(len(seen)) for p in caught[i]] == []
    for i, (_, name) in enumerate(mutants, start=len(seen)):
        assert len(caught[i]) == 1 and name in caught[i][0], caught[i]
