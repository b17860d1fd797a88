"""Kubernetes Events about a run, on the pod the supervisor runs in (the Ray head), through the kubernetes Python
client with the pod's service account. Outside a cluster (no KUBERNETES_SERVICE_HOST) nothing is sent: the
supervisor's report and the grpo_stall metric carry the same words.

Where the check stops: the Event's shape is the core/v1 API's; no test posts one to an API server here (the head
pod's Role must allow `create` on `events`, which the chart does not grant yet).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable

NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
COMPONENT = "grpo-stack-supervisor"


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def event_body(namespace: str, pod: str, reason: str, message: str, kind: str, now: float) -> dict:
    """A core/v1 Event on Pod `pod` (kind: Normal | Warning)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"generateName": f"{pod}.grpo-", "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": namespace},
        "reason": reason, "message": message[:1024], "type": kind,
        "source": {"component": COMPONENT}, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
    }


class EventSink:
    """Posts Events when in a cluster; a failure is reported once, then Events are off for this supervisor."""

    def __init__(self, report: Callable[[str], None] = print):
        self.report = report
        self.api = None
        self.off = not in_cluster()

    def emit(self, reason: str, message: str, kind: str = "Warning") -> None:
        if self.off:
            return
        try:
            if self.api is None:
                from kubernetes import client, config

                config.load_incluster_config()
                self.api = client.CoreV1Api()
            with open(NAMESPACE_FILE, encoding="utf-8") as fh:
                namespace = fh.read().strip()
            pod = os.environ.get("POD_NAME") or socket.gethostname()
            self.api.create_namespaced_event(namespace, event_body(namespace, pod, reason, message, kind,
                                                                   time.time()))
        except Exception as exc:  # noqa: BLE001 - an Event is a courtesy: the run goes on without it
            self.off = True
            self.report(f"events: cannot post a Kubernetes Event ({type(exc).__name__}: {exc}); the report and "
                        "the grpo_stall metric carry it")
