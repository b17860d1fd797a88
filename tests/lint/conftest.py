"""grpo-lint tests never read or write the user's result cache: each test gets its own, empty one. Also the
KubeRay CRD tests' fixtures: the shipped schema, a private user cache, and a loopback HTTP server serving files."""

from __future__ import annotations

import http.server
import json
import threading

import pytest


@pytest.fixture(autouse=True)
def _private_lint_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRPO_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("lint-cache")))


@pytest.fixture
def crd_file(raycluster_crd):
    return raycluster_crd


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GRPO_KUBERAY_CRD", raising=False)
    return tmp_path / "cache"


def crd_wrapping(schema: dict) -> bytes:
    """A RayCluster CustomResourceDefinition holding `schema`, shaped like the KubeRay release's file."""
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                       "spec": {"group": "ray.io", "names": {"kind": "RayCluster"},
                                "versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}}).encode()


@pytest.fixture
def serve():
    """serve(bodies) -> (base URL on 127.0.0.1, the paths requested): each path answers its body, others 404."""
    servers = []

    def start(bodies: dict[str, bytes]) -> tuple[str, list[str]]:
        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                hits.append(self.path)
                body = bodies.get(self.path)
                self.send_response(200 if body else 404)
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}", hits

    yield start
    for httpd in servers:
        httpd.shutdown()
