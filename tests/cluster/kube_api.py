"""The tests' side of the API server: the `kubernetes` client's dynamic client over a kubeconfig, with the few
verbs the oracles and the preflight tests need (create, server-side dry run, delete, wait). Everything here
talks to the real API server; nothing answers in its place."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client, config, dynamic
from kubernetes.dynamic.exceptions import ApiException, NotFoundError


class Kube:
    """One dynamic client; `resource(apiVersion, kind)` is discovered once and cached."""

    def __init__(self, kubeconfig: str):
        self.kubeconfig = kubeconfig
        self.api = config.new_client_from_config(config_file=str(kubeconfig))
        self.dyn = dynamic.DynamicClient(self.api)
        self._resources: dict[tuple[str, str], Any] = {}

    def resource(self, api_version: str, kind: str):
        key = (api_version, kind)
        if key not in self._resources:
            self._resources[key] = self.dyn.resources.get(api_version=api_version, kind=kind)
        return self._resources[key]

    def create(self, obj: dict[str, Any], namespace: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        res = self.resource(obj["apiVersion"], obj["kind"])
        ns = namespace if res.namespaced else None
        return self.dyn.create(res, body=obj, namespace=ns, dry_run="All" if dry_run else None).to_dict()

    def apply_once(self, obj: dict[str, Any], namespace: str | None = None) -> None:
        """Create, or leave as it is when it already exists (409)."""
        try:
            self.create(obj, namespace)
        except ApiException as exc:
            if exc.status != 409:
                raise

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        try:
            return self.dyn.get(self.resource(api_version, kind), name=name, namespace=namespace).to_dict()
        except NotFoundError:
            return None

    def list(self, api_version: str, kind: str, namespace: str | None = None, **kw) -> list[dict[str, Any]]:
        return self.dyn.get(self.resource(api_version, kind), namespace=namespace, **kw).to_dict()["items"]

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        try:
            self.dyn.delete(self.resource(api_version, kind), name=name, namespace=namespace,
                            body={"gracePeriodSeconds": 0, "propagationPolicy": "Background"})
        except NotFoundError:
            pass

    def delete_collection(self, api_version: str, kind: str, namespace: str | None = None,
                          label_selector: str | None = None) -> None:
        res = self.resource(api_version, kind)
        path = res.path(namespace=namespace) if res.namespaced else res.path()
        query = [("labelSelector", label_selector)] if label_selector else []
        query.append(("gracePeriodSeconds", "0"))
        self.api.call_api(path, "DELETE", query_params=query, auth_settings=["BearerToken"],
                          _preload_content=False, _return_http_data_only=True)

    def close(self) -> None:
        self.api.close()


@contextmanager
def scratch_namespace(cp, name: str) -> Iterator[Kube]:
    """A namespace without Pod Security enforcement for server-side dry runs, and a client; deleted after."""
    cp.create_namespace(name, enforce="privileged", warn="privileged")
    kube = Kube(cp.kubeconfig)
    try:
        yield kube
    finally:
        kube.delete("v1", "Namespace", name)
        kube.close()


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60, every: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)


def client_config_host(kubeconfig: str) -> str:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
    return cfg.host
