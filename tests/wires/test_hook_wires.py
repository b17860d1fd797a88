"""The `helm test` hooks' calls, each run as rendered (the hook Pod's own script) against the release's peer on
loopback: the real reward service configured from the rendered Deployment's env, the test sandbox that checks
SandboxFusion's models (tests/wires/sandbox_contract.py), and a stand-in vLLM serving the rendered Deployment's
`--served-model-name`. Only the Service URL in each script is pointed at loopback. Where it stops: the vLLM
stand-in answers `/v1/models` itself; no vLLM server runs here.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import pytest
from reward_harness import ServiceProcess
from sandbox_stub import SandboxStub

from tests.conftest import RELEASE

HOOK_TIMEOUT_S = 120


def _hook(rendered, component: str) -> tuple[str, str]:
    """(script, the Service URL it calls) of the hook Pod of `component`."""
    (pod,) = [o.obj for o in rendered.of_kind("Pod") if o.name == f"{RELEASE}-{component}-test"]
    (container,) = pod["spec"]["containers"]
    assert container["command"] == ["python3", "-c"], container["command"]
    script = container["args"][0]
    (url,) = {line.split('"')[1] for line in script.splitlines() if line.startswith("url = ")}
    return script, url


def _run(script: str, url: str, loopback: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script.replace(url, loopback)], capture_output=True, text=True,
                          timeout=HOOK_TIMEOUT_S)


@pytest.mark.parametrize("values_name_", ["qwen3-30b", "miles-qwen3-4b"])
def test_reward_service_hook_against_the_real_service(values_name_, render_values, tmp_path):
    rendered = render_values(values_name_)
    script, url = _hook(rendered, "reward-service")
    (deploy,) = [o.obj for o in rendered.of_kind("Deployment") if o.name == f"{RELEASE}-reward-service"]
    env = {e["name"]: e["value"] for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]
           if e["name"] in ("REWARD_BACKEND", "REWARD_ROUTES", "REWARD_HARD_TIMEOUT_S") and "value" in e}
    with ServiceProcess({**env, "REWARD_WORKERS": "1"}, tmp_path) as service:
        done = _run(script, url, service.url + "/score")
    assert done.returncode == 0, done.stderr[-2000:]


def test_sandbox_hook_fits_sandbox_fusions_models(render_values):
    script, url = _hook(render_values("qwen3-235b"), "sandbox-fusion")
    with SandboxStub() as sandbox:
        done = _run(script, url, sandbox.url)
        assert done.returncode == 0, done.stderr[-2000:]
        assert sandbox.requests and sandbox.violations == []


class _Models(http.server.BaseHTTPRequestHandler):
    served = ""

    def do_GET(self):
        found = self.path == "/v1/models"
        body = json.dumps({"object": "list", "data": [{"id": self.served, "object": "model"}]} if found
                          else {"detail": "Not Found"}).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_vllm_hook_lists_the_served_model(render_values):
    """The hook expects the name the vLLM Deployment serves under (its --served-model-name), on vLLM's path."""
    rendered = render_values("qwen3-8b", {"global.components.vllm": True})
    script, url = _hook(rendered, "vllm")
    (deploy,) = [o.obj for o in rendered.of_kind("Deployment") if o.name == f"{RELEASE}-vllm"]
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    (_Models.served,) = [a.split("=", 1)[1] for a in args if a.startswith("--served-model-name=")]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = _run(script, url, f"http://127.0.0.1:{server.server_port}{urlsplit(url).path}")
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr[-2000:]
