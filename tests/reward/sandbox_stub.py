"""A SandboxFusion `/run_code` server for tests, on loopback, following the documented contract.

It really runs the submitted Python (with stdin, run_timeout and the exit code), and answers the way SandboxFusion
does (`RunCodeResponse`: Success / Failed, run_result Finished / TimeLimitExceeded; 422 for a bad language or a
missing `code`). `mode` switches it into the faults a real sandbox shows: SandboxError, HTTP 500, a reply slower
than any client timeout. Every request is counted, so tests can check retries.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LANGUAGES = {"python", "cpp", "nodejs", "go", "java", "bash", "pytest"}  # part of the server's Literal


class SandboxStub:
    def __init__(self) -> None:
        self.mode = "normal"  # normal | sandbox_error | http_500 | slow
        self.calls = 0
        self.slow_s = 30.0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/v1/ping" and stub.mode == "normal":
                    self._reply(200, "pong")
                else:
                    self._reply(503 if self.path == "/v1/ping" else 404, {"detail": "not available"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                stub.calls += 1
                if self.path != "/run_code":
                    return self._reply(404, {"detail": "Not Found"})
                if stub.mode == "http_500":
                    return self._reply(500, {"detail": "internal error", "traceback": "..."})
                if stub.mode == "slow":
                    time.sleep(stub.slow_s)
                    return self._reply(200, {"status": "Success"})
                if "code" not in body or body.get("language") not in LANGUAGES:
                    return self._reply(422, {"detail": [{"type": "missing", "loc": ["body", "code"]}]})
                if stub.mode == "sandbox_error":
                    return self._reply(200, {"status": "SandboxError", "message": "runner crashed",
                                             "compile_result": None, "run_result": None, "files": {}})
                self._reply(200, run_python(body["code"], body.get("stdin"), float(body.get("run_timeout", 10))))

            def _reply(self, status: int, payload) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout tests)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/run_code"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SandboxStub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_python(code: str, stdin: str | None, run_timeout: float) -> dict:
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", code], input=stdin or "", capture_output=True, text=True,
                              timeout=run_timeout)
        run = {"status": "Finished", "return_code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        run = {"status": "TimeLimitExceeded", "return_code": None, "stderr": "",
               "stdout": out.decode(errors="replace") if isinstance(out, bytes) else out}
    run["execution_time"] = time.monotonic() - started
    ok = run["status"] == "Finished" and run["return_code"] == 0
    return {"status": "Success" if ok else "Failed", "message": "", "compile_result": None, "run_result": run,
            "executor_pod_name": None, "files": {}}
