"""The API server, through the kubernetes client: one connection, its failures as Refused, and exec into a pod."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

from . import Refused

TIMEOUT_S = 15  # per request: an address that does not answer is an unreachable cluster, not a hang
RAY_GROUP, RAY_VERSION = "ray.io", "v1"


class Executor(Protocol):
    """Runs `python3 -m grpo_stack.runctl.inpod ARGS` where the run's storage and Ray's job API are: the head pod
    (PodExecutor), or a local process in the tests; only the transport differs."""

    def inpod(self, args: list[str], sink: Callable[[str], None] | None = None) -> tuple[int, str, str]:
        """(exit status, stdout, stderr); with `sink`, stdout goes there as it comes instead."""


class Kube:
    def __init__(self, kubeconfig: str | None, context: str | None):
        from kubernetes import client, config

        cfg = client.Configuration()
        try:
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        except (config.ConfigException, OSError, ValueError, TypeError) as exc:
            where = kubeconfig or "the kubeconfig ($KUBECONFIG or ~/.kube/config)"
            raise Refused(f"{where}: {exc}") from exc
        cfg.retries = 0
        self.host = cfg.host
        self.api = client.ApiClient(cfg)
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        try:
            _, active = config.list_kube_config_contexts(config_file=kubeconfig)
            self.default_namespace = (active.get("context") or {}).get("namespace") or "default"
        except (config.ConfigException, OSError, ValueError, TypeError):
            self.default_namespace = "default"

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API request; an unreachable server, a refusal or a missing API is a Refused naming `what`."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return fn(*args, _request_timeout=TIMEOUT_S, **kwargs)
        except ApiException as exc:
            if exc.status == 404 and "ray.io" in what:
                raise Refused(f"{what}: the API server at {self.host} serves no ray.io/v1 (is KubeRay "
                              "installed?)") from exc
            if not exc.status:  # the client's websocket (exec) failed: its reason is the whole story
                raise Refused(f"{what}: {str(exc.reason).strip()[:300]}") from exc
            raise Refused(f"{what}: the API server at {self.host} answered {exc.status} {exc.reason}") from exc
        except (HTTPError, OSError) as exc:
            raise Refused(f"cannot reach the cluster at {self.host} ({what}): {_reason(exc)}") from exc

    def list_ray(self, plural: str, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        return self.call(f"list {plural}.ray.io in {namespace}", self.custom.list_namespaced_custom_object,
                         RAY_GROUP, RAY_VERSION, namespace, plural, label_selector=selector or "")["items"]

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        got = self.call(f"list pods {selector} in {namespace}", self.core.list_namespaced_pod, namespace,
                        label_selector=selector)
        return [self.api.sanitize_for_serialization(p) for p in got.items]

    def namespace_exists(self, namespace: str) -> bool:
        from kubernetes.client.exceptions import ApiException

        try:
            self.call(f"read namespace {namespace}", self.core.read_namespace, namespace)
        except Refused as exc:
            if isinstance(exc.__cause__, ApiException) and exc.__cause__.status == 404:
                return False
            if isinstance(exc.__cause__, ApiException) and exc.__cause__.status == 403:
                return True  # not allowed to read namespaces: the lists that follow say more
            raise
        return True

    def executor(self, namespace: str, pod: str, container: str, tools: str) -> PodExecutor:
        return PodExecutor(self, namespace, pod, container, tools)


class PodExecutor:
    """`kubectl exec` through the client's websocket stream; the package is imported from `tools`, where the submit
    put it in the pod."""

    def __init__(self, kube: Kube, namespace: str, pod: str, container: str, tools: str):
        self.kube, self.namespace, self.pod, self.container, self.tools = kube, namespace, pod, container, tools

    def inpod(self, args: list[str], sink: Callable[[str], None] | None = None) -> tuple[int, str, str]:
        script = f'PYTHONPATH={self.tools}${{PYTHONPATH:+:$PYTHONPATH}} exec python3 -m grpo_stack.runctl.inpod "$@"'
        return self.run(["sh", "-c", script, "grpo-run", *args], sink)

    def run(self, argv: list[str], sink: Callable[[str], None] | None = None) -> tuple[int, str, str]:
        from kubernetes.stream import stream

        what = f"exec into {self.namespace}/{self.pod}"
        resp = self.kube.call(what, lambda **kw: stream(
            self.kube.core.connect_get_namespaced_pod_exec, self.pod, self.namespace, container=self.container,
            command=argv, stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False,
            **{k: v for k, v in kw.items() if k != "_request_timeout"}))
        from websocket import WebSocketException

        out: list[str] = []
        err: list[str] = []
        try:
            while resp.is_open():
                resp.update(timeout=1)
                if resp.peek_stdout():
                    chunk = resp.read_stdout()
                    sink(chunk) if sink else out.append(chunk)
                if resp.peek_stderr():
                    err.append(resp.read_stderr())
        except (WebSocketException, OSError) as exc:
            raise Refused(f"{what}: the connection ended ({exc})") from exc
        finally:
            resp.close()
        code = resp.returncode
        return (code if code is not None else 1), "".join(out), "".join(err)


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return str(reason).split(": ", 1)[-1][:300]


def write(chunk: str) -> None:
    sys.stdout.write(chunk)
    sys.stdout.flush()
