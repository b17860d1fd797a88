"""The local cluster's service proxy (grpo_stack/localcluster/serviceproxy.py) as its own process, asked the way the
KubeRay operator asks it: an absolute-form request for a Service's cluster name through HTTP_PROXY. The server behind
it is a real HTTP server on loopback; the client is urllib's proxy handler, which sends what Go's net/http sends
(`GET http://host:port/path HTTP/1.1` to the proxy). The operator itself through it:
tests/cluster/test_job_mode_live.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from grpo_stack.localcluster import serviceproxy
from grpo_stack.localcluster.ports import free_port

NAME = "grpo-ray-x7k2p-head-svc.team.svc.cluster.local:8265"


class Dashboard(BaseHTTPRequestHandler):
    """Answers like Ray's job API: the path and body it was sent, as JSON."""

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({"method": self.command, "path": self.path,
                           "body": self.rfile.read(length).decode() if length else None}).encode()
        self.send_response(404 if self.path.endswith("/missing") else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def proxy(tmp_path):
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Dashboard)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    port, routes = free_port(), tmp_path / "routes.json"
    proc = subprocess.Popen([sys.executable, serviceproxy.__file__, f"--port={port}", f"--routes={routes}"],
                            stderr=subprocess.DEVNULL, cwd=tmp_path)  # as the cluster runs it: by its path
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()  # noqa: S310
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the proxy never answered /healthz"
            time.sleep(0.1)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"}))
    yield opener, routes, f"127.0.0.1:{backend.server_address[1]}"
    proc.terminate()
    proc.wait(timeout=10)
    backend.shutdown()


def test_a_routed_service_name_reaches_its_local_process(proxy):
    opener, routes, backend = proxy
    serviceproxy.route(routes, NAME, backend)
    with opener.open(f"http://{NAME}/api/jobs/grpo-ray-abc?x=1", timeout=10) as resp:
        assert json.loads(resp.read()) == {"method": "GET", "path": "/api/jobs/grpo-ray-abc?x=1", "body": None}
    request = urllib.request.Request(f"http://{NAME}/api/jobs/", data=b'{"entrypoint": "true"}', method="POST")
    with opener.open(request, timeout=10) as resp:
        assert json.loads(resp.read())["body"] == '{"entrypoint": "true"}'
    # The backend's own status passes through: Ray's 404 for an unknown job is what the operator reads.
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener.open(f"http://{NAME}/api/jobs/missing", timeout=10)
    assert caught.value.code == 404


def test_an_unrouted_or_dead_route_is_a_bad_gateway_naming_it(proxy):
    opener, routes, _ = proxy
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener.open(f"http://{NAME}/api/jobs/", timeout=10)
    assert caught.value.code == 502 and NAME in caught.value.read().decode()
    serviceproxy.route(routes, NAME, f"127.0.0.1:{free_port()}")  # nothing listens there
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener.open(f"http://{NAME}/api/jobs/", timeout=10)
    assert caught.value.code == 502


def test_routes_accumulate_and_a_reader_never_sees_half_a_file(tmp_path):
    routes = tmp_path / "routes.json"
    serviceproxy.route(routes, "a.ns.svc.cluster.local:8265", "127.0.0.1:1")
    serviceproxy.route(routes, "b.ns.svc.cluster.local:8265", "127.0.0.1:2")
    assert serviceproxy.read_routes(routes) == {"a.ns.svc.cluster.local:8265": "127.0.0.1:1",
                                                "b.ns.svc.cluster.local:8265": "127.0.0.1:2"}
    assert not [p for p in tmp_path.iterdir() if p.name != "routes.json"], "no temporary file left behind"
    routes.write_text("[not, a, table")
    assert serviceproxy.read_routes(routes) == {}
