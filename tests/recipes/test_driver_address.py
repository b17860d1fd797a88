"""Where a miles attempt's steps are read: miles' own Prometheus collector runs on the driver's node, and the
supervisor finds that node through Ray's job API (`Ray.driver_node_ip`, JobDetails.driver_info). Checked against the
REAL local Ray head of this tier with a real driver; the collector itself is the miles tier's
(tests/miles/test_miles_step_metrics.py)."""

from __future__ import annotations

import ipaddress
import time

from grpo_stack.job.rayjobs import Ray


def test_the_driver_node_is_known_once_the_driver_runs(ray_head):
    address, _ = ray_head
    ray = Ray(address)
    job = ray.submit(["python3", "-c", "import time; time.sleep(30)"], {}, 0, "driver-address")
    try:
        deadline = time.monotonic() + 120
        found = None
        while found is None and time.monotonic() < deadline:
            found = ray.driver_node_ip(job)
            if found is None:
                time.sleep(0.5)
        assert found is not None, "Ray never named the driver's node"
        ipaddress.ip_address(found)  # an address the supervisor can build a URL from
    finally:
        ray.stop(job)
