"""Where a miles attempt's steps are read: miles' own Prometheus collector runs on the driver's node, and the
supervisor finds that node through Ray's job API (`Ray.driver_node_ip`). Checked against the REAL local Ray head of
this tier with a real driver that never connects to Ray (so the job agent's address is what names the node), and
the address is reached as the supervisor reaches the collector: over HTTP, at a server listening on every interface,
as miles' collector does. The collector itself is the miles tier's (tests/miles/test_miles_step_metrics.py)."""

from __future__ import annotations

import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from grpo_stack.job.rayjobs import Ray


class Answer(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"miles_metric_rollout_step 1.0\n")

    def log_message(self, *_args):
        pass


def test_the_driver_node_is_known_once_the_driver_runs_and_reachable(ray_head):
    address, _ = ray_head
    ray = Ray(address)
    server = ThreadingHTTPServer(("0.0.0.0", 0), Answer)  # noqa: S104 (as prometheus_client binds)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    job = ray.submit(["python3", "-c", "import time; time.sleep(60)"], {}, 0, "driver-address")
    try:
        deadline = time.monotonic() + 120
        found = None
        while found is None and time.monotonic() < deadline:
            found = ray.driver_node_ip(job)
            if found is None:
                time.sleep(0.5)
        assert found is not None, "Ray never named the driver's node"
        url = f"http://{found}:{server.server_address[1]}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert b"miles_metric_rollout_step" in response.read()
    finally:
        ray.stop(job)
        server.shutdown()
