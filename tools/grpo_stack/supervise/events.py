"""Kubernetes Events about a run, on the pod the supervisor runs in (the Ray head), through the kubernetes Python
client with the pod's service account (global.job.supervision.events: the chart's Role lets that account create
events in the release namespace, and nothing else). Off, or outside a cluster (no KUBERNETES_SERVICE_HOST),
nothing is sent: the supervisor's report and the grpo_stall metric carry the same words.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path

# Where the kubelet mounts the pod's service-account token, CA and namespace.
ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"
COMPONENT = "grpo-stack-supervisor"


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
    """Posts Events when asked to and in a cluster; a failure is reported once, then Events are off for this
    supervisor (an Event is a courtesy: the run goes on without it)."""

    def __init__(self, report: Callable[[str], None] = print, enabled: bool = True,
                 account_dir: Path = ACCOUNT_DIR, environ: Mapping[str, str] = os.environ):
        self.report, self.account_dir, self.environ = report, account_dir, environ
        self.api = None
        self.off = not (enabled and environ.get(SERVICE_HOST_ENV))

    def _connect(self):
        from kubernetes import client
        from kubernetes.config.incluster_config import InClusterConfigLoader

        configuration = client.Configuration()
        InClusterConfigLoader(token_filename=str(self.account_dir / "token"),
                              cert_filename=str(self.account_dir / "ca.crt"),
                              environ=self.environ).load_and_set(configuration)
        return client.CoreV1Api(client.ApiClient(configuration))

    def emit(self, reason: str, message: str, kind: str = "Warning") -> None:
        if self.off:
            return
        try:
            if self.api is None:
                self.api = self._connect()
            namespace = (self.account_dir / "namespace").read_text(encoding="utf-8").strip()
            pod = self.environ.get("POD_NAME") or socket.gethostname()
            self.api.create_namespaced_event(namespace, event_body(namespace, pod, reason, message, kind,
                                                                   time.time()))
        except Exception as exc:  # noqa: BLE001 - an Event is a courtesy: the run goes on without it
            self.off = True
            self.report(f"events: cannot post a Kubernetes Event ({type(exc).__name__}: {_short(exc)}); the report "
                        "and the grpo_stall metric carry it")


def _short(exc: Exception) -> str:
    """The API's refusal in one line (ApiException's text carries every response header)."""
    status, reason = getattr(exc, "status", None), getattr(exc, "reason", None)
    return f"{status} {reason}" if status else str(exc).splitlines()[0][:300] if str(exc) else ""
