"""The lm-eval Job's own script driving lm-eval's real CLI against a stand-in vLLM (127.0.0.1).

lm-eval comes from the lm-eval tier's venv ($LMEVAL_VENV, which `make test` builds with the image's pins), or from
GRPO_LMEVAL_BIN, the bin/ directory of any environment with `lm_eval[api]==0.4.10` (the image's version).
Neither: a skip on a workstation, a failure under CI=true.
Checks what the chart claims: every request asks for max_tokens = global.job.lengths.maxResponse, for the served
model name, and the results land where `grpo-eval compare` reads them.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from grpo_stack.cli.eval import main
from grpo_stack.render import render
from grpo_stack.values import load_values_file, merge_user_values

REPO = Path(__file__).resolve().parents[2]
TASK = """task: gsm8k
dataset_path: json
dataset_kwargs: {{data_files: {{test: {docs}, train: {docs}}}}}
output_type: generate_until
test_split: test
doc_to_text: "Question #{{{{id}}}}: {{{{question}}}}\\nAnswer:"
doc_to_target: "#### {{{{id}}}}"
metric_list:
  - {{metric: exact_match, aggregation: mean, higher_is_better: true, regexes_to_ignore: ["(?s).*#### "]}}
generation_kwargs: {{until: ["Question:"], do_sample: false, temperature: 0.0}}
num_fewshot: 0
filter_list:
  - name: strict-match
    filter: [{{function: regex, regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"}}, {{function: take_first}}]
  - name: flexible-extract
    filter:
      - {{function: regex, group_select: -1, regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"}}
      - {{function: take_first}}
"""


class _Vllm(http.server.BaseHTTPRequestHandler):
    requests: list = []

    def _send(self, doc):
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send({"data": [{"id": "grpo-eval-eval"}]})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Vllm.requests.append(req)
        prompts = req["prompt"] if isinstance(req["prompt"], list) else [req["prompt"]]
        answers = [" #### " + p.split("#")[1].split(":")[0] for p in prompts]  # right on every document
        self._send({"choices": [{"index": i, "text": a, "finish_reason": "stop", "logprobs": None}
                                for i, a in enumerate(answers)]})

    def log_message(self, *args):
        pass


def lmeval_bin() -> str:
    bin_dir = os.environ.get("GRPO_LMEVAL_BIN")
    venv = os.environ.get("LMEVAL_VENV")
    if not bin_dir and venv and (Path(venv) / "bin" / "lm_eval").exists():
        bin_dir = str(Path(venv) / "bin")
    if bin_dir:
        return bin_dir
    why = "no lm-eval: set LMEVAL_VENV (make test builds it) or GRPO_LMEVAL_BIN (lm_eval[api]==0.4.10)"
    if os.environ.get("CI") == "true":
        pytest.fail(why, pytrace=False)
    pytest.skip(why)


def test_job_script_runs_lm_eval_with_trainings_budget(tmp_path, capsys):
    bin_dir = lmeval_bin()
    user = merge_user_values([load_values_file(REPO / "values/qwen3-8b.yaml"),
                              load_values_file(REPO / "values/eval/eval.yaml")])
    user["lm-eval"] = {"tasks": ["gsm8k"]}
    job = next(o.obj for o in render(user, release="grpo-eval", namespace="ns").of_kind("Job"))
    c = job["spec"]["template"]["spec"]["containers"][0]
    (tmp_path / "tasks").mkdir()
    (tmp_path / "image-hf").mkdir()
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": i, "question": f"q{i}"}) + "\n" for i in range(5)))
    (tmp_path / "tasks" / "gsm8k.yaml").write_text(TASK.format(docs=docs))
    script = (c["args"][0].replace("/eval-out", str(tmp_path / "out")).replace("/tasks", str(tmp_path / "tasks"))
              .replace("/opt/hf-home", str(tmp_path / "image-hf")))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Vllm)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    env.update(READY_TIMEOUT_SECONDS="30", MODELS_URL=f"{base}/v1/models", COMPLETIONS_URL=f"{base}/v1/completions",
               HF_HOME=str(tmp_path / "hf"), HOME=str(tmp_path), PATH=f"{bin_dir}:{os.environ['PATH']}")
    try:
        proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=600)
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _Vllm.requests and {r["max_tokens"] for r in _Vllm.requests} == {4096}  # qwen3-8b maxResponse
    assert {r["model"] for r in _Vllm.requests} == {"grpo-eval-eval"}
    assert main(["compare", "--run", str(tmp_path / "out"), "--baseline", str(tmp_path / "out"), "--format",
                 "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {(r["task"], r["run"]["value"]) for r in rows} == {("gsm8k", 1.0)}
