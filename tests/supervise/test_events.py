"""Kubernetes Events about a run (grpo_stack.supervise.events): off unless the values ask and outside a cluster;
the body a core/v1 Event on the head pod. The real API server admits one, posted with a token of the chart's head
account, in tests/cluster/test_monitoring_admission.py."""

from __future__ import annotations

from grpo_stack.job.spec import Spec
from grpo_stack.job.supervised import watching
from grpo_stack.supervise.events import EventSink, event_body


def test_outside_a_cluster_nothing_is_sent_and_nothing_reported(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    lines: list[str] = []
    EventSink(lines.append).emit("TrainingStalled", "no new step")
    assert lines == []


def test_off_unless_the_values_ask_even_in_a_cluster(monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    lines: list[str] = []
    EventSink(lines.append, enabled=False).emit("TrainingStalled", "no new step")
    assert lines == []


def test_the_values_turn_the_supervisors_events_on(monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")

    def events(job: dict) -> EventSink:
        return watching(Spec({"job": job, "cluster": {}, "storage": {}})).events

    assert events({"supervision": {"events": {"enabled": True, "apiServerCidrs": ["10.0.0.0/16"]}}}).off is False
    assert events({"supervision": {"events": {"enabled": False}}}).off
    assert events({"supervision": {"retries": 2}}).off
    assert events({}).off


def test_a_failing_client_is_reported_once_then_events_are_off(monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    lines: list[str] = []
    sink = EventSink(lines.append)
    sink.emit("TrainingStalled", "no new step")  # no service-account token here: the client refuses
    sink.emit("TrainingStalled", "no new step")
    assert len(lines) == 1 and lines[0].startswith("events: cannot post a Kubernetes Event")


def test_the_event_names_the_pod_and_says_why():
    body = event_body("grpo", "grpo-head-abc", "TrainingStalled", "no new step in 700 s", "Warning", 0.0)
    assert body["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "grpo-head-abc", "namespace": "grpo"}
    assert (body["reason"], body["type"], body["lastTimestamp"]) == ("TrainingStalled", "Warning",
                                                                     "1970-01-01T00:00:00Z")
