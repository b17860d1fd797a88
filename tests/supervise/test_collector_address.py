"""Where the supervisor reads a miles attempt's steps: miles' collector on the driver's node, at the values'
stepMetricsPort. The node's address comes from Ray's job API (tests/recipes/test_driver_address.py asks a real
head); here a stand-in answers with the addresses a node can have, and the URL the collector is read at is
checked as the supervisor builds it."""

from __future__ import annotations

from grpo_stack.job.spec import Spec
from grpo_stack.job.supervised import RayAttempts, watching


class _Ray:
    def __init__(self, answers):
        self.answers, self.asked = list(answers), 0

    def driver_node_ip(self, job_id: str):
        self.asked += 1
        return self.answers.pop(0)


def _collector_urls(answers, polls: int) -> tuple[list, int]:
    ray = _Ray(answers)
    w = watching(Spec({"job": {"supervision": {"stepMetricsPort": 9108}}, "cluster": {}, "storage": {}}))
    attempts = RayAttempts(ray, [], {}, "run", lambda: None, "/tmp/ckpt", "miles", w)
    steps = attempts.steps("raysubmit_1")
    return [steps.url() for _ in range(polls)], ray.asked


def test_an_ipv4_node_is_read_at_its_address_and_asked_for_once_placed():
    urls, asked = _collector_urls([None, "10.1.2.3"], 4)
    assert urls == [None, "http://10.1.2.3:9108/metrics", "http://10.1.2.3:9108/metrics",
                    "http://10.1.2.3:9108/metrics"]
    assert asked == 2, "the driver does not move: once Ray names its node, the supervisor stops asking"


def test_an_ipv6_node_is_bracketed_in_the_url():
    urls, _ = _collector_urls(["fd00:10:244::7"], 1)
    assert urls == ["http://[fd00:10:244::7]:9108/metrics"]
