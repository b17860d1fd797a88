"""Kubernetes Events about a stall (grpo_stack.supervise.events): off outside a cluster; the body a core/v1 Event
on the head pod. Where the check stops: no API server admits one here (the module's docstring)."""

from __future__ import annotations

from grpo_stack.supervise.events import EventSink, event_body


def test_outside_a_cluster_nothing_is_sent_and_nothing_reported(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    lines: list[str] = []
    EventSink(lines.append).emit("TrainingStalled", "no new step")
    assert lines == []


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
