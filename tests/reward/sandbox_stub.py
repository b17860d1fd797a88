"""A SandboxFusion `/run_code` server for tests, on loopback, following the documented contract.

It really runs the submitted Python (with stdin, run_timeout and the exit code), and answers the way SandboxFusion
does (`RunCodeResponse`: Success / Failed, run_result Finished / TimeLimitExceeded). `mode` switches it into the
faults a real sandbox shows: SandboxError, HTTP 500, a reply slower than any client timeout. Every request is
counted, so tests can check retries.

Every request it receives and every reply it sends is checked strictly against SandboxFusion's own client models
(tests/wires/sandbox_contract.py): a request that does not fit is answered 422 and recorded, a reply that does not
fit is recorded, and leaving the `with` block with anything recorded fails the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.wires.sandbox_contract import RUN_CODE_PATH, reply_problems, request_problems


class SandboxStub:
    def __init__(self) -> None:
        self.mode = "normal"  # normal | sandbox_error | http_500 | slow
        self.calls = 0
        self.slow_s = 30.0
        self.violations: list[str] = []
        self.requests: list[dict] = []
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
                stub.requests.append(body)
                if self.path != RUN_CODE_PATH:
                    return self._reply(404, {"detail": "Not Found"})
                if found := request_problems(body):
                    stub.violations += found
                    return self._reply(422, {"detail": found})
                if stub.mode == "http_500":
                    return self._reply(500, {"detail": "internal error", "traceback": "..."})
                if stub.mode == "slow":
                    time.sleep(stub.slow_s)
                    return self._reply(200, {"status": "Success", "message": "", "compile_result": None,
                                             "run_result": None, "executor_pod_name": None, "files": {}})
                if stub.mode == "sandbox_error":
                    return self._reply(200, {"status": "SandboxError", "message": "runner crashed",
                                             "compile_result": None, "run_result": None, "files": {}})
                self._reply(200, run_python(body["code"], body.get("stdin"), float(body.get("run_timeout", 10))))

            def _reply(self, status: int, payload) -> None:
                if status == 200 and self.path == RUN_CODE_PATH:
                    stub.violations += reply_problems(payload)
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

    def __exit__(self, exc_type, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        if exc_type is None and self.violations:
            raise AssertionError("the sandbox wire broke SandboxFusion's models:\n" + "\n".join(self.violations))


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
