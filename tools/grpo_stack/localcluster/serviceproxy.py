"""Cluster DNS for the local cluster's operator: an HTTP forward proxy that sends a request for a Service's cluster
name (`<service>.<namespace>.svc.cluster.local:<port>`) to the local process a route names.

kwok runs no container, so nothing answers at a Ray head's Service. The KubeRay operator polls a RayJob's status from
the head's dashboard through that name (rayjob_controller.go GetJobInfo, over a plain net/http client). It runs here
with HTTP_PROXY naming this proxy: Go's net/http sends every http:// request through it except to loopback, where
the API server is. With a route, the operator's request reaches a real Ray head on loopback and the RayJob ends as
the Ray job did; without one it is answered 502, as an unresolvable name fails the operator's client in a cluster
with no head.

Routes are a JSON file, {"<host>:<port>": "127.0.0.1:<port>"}, read on each request so that `route()` takes effect
at once without a restart. Only plain HTTP is forwarded (no CONNECT): the dashboard speaks nothing else.

    python serviceproxy.py --port PORT --routes FILE      (standard library only: the cluster runs it by its path)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

FORWARD_TIMEOUT_S = 10.0
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade"})


def read_routes(path: Path) -> dict[str, str]:
    try:
        routes = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return routes if isinstance(routes, dict) else {}


def route(path: Path, name: str, target: str) -> None:
    """Send requests for `name` (`host:port`) to `target` (`127.0.0.1:port`) from now on. Written whole and
    renamed into place, so a request never reads half a file."""
    routes = {**read_routes(path), name: target}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as out:
        json.dump(routes, out, indent=1, sort_keys=True)
    os.replace(tmp, path)


def handler(routes_file: Path) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, code: int, text: str) -> None:
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self) -> None:
            if self.path == "/healthz":  # asked of the proxy itself, not through it
                self._answer(200, "ok")
                return
            url = urlsplit(self.path)
            if url.scheme != "http" or not url.netloc:
                self._answer(400, f"not a proxy request: {self.path}")
                return
            name = url.netloc if url.port else f"{url.netloc}:80"
            target = read_routes(routes_file).get(name)
            if target is None:
                self._answer(502, f"no local process answers for {name}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
            path = url.path + (f"?{url.query}" if url.query else "")
            host, _, port = target.rpartition(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=FORWARD_TIMEOUT_S)
            try:
                conn.request(self.command, path or "/", body=body, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
            except OSError as exc:
                self._answer(502, f"{name} -> {target}: {exc}")
                return
            finally:
                conn.close()
            self.send_response(resp.status, resp.reason)
            for key, value in resp.getheaders():
                if key.lower() not in HOP_BY_HOP | {"content-length"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

    return Forward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serviceproxy.py")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--routes", type=Path, required=True)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(args.routes))
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
