"""A read-only connection to the API server through the `kubernetes` client: GET requests only, answers as
plain JSON, and every failure to reach or read the cluster as one clear input error (exit 2)."""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import InputError

TIMEOUT_S = 10


class Cluster:
    """GETs against one API server. `get` returns None for 404; 401/403 and transport failures raise."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None):
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        cfg = client.Configuration()
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        try:
            if kubeconfig is None and context is None and "KUBERNETES_SERVICE_HOST" in os.environ \
                    and not os.environ.get("KUBECONFIG"):
                config.load_incluster_config(client_configuration=cfg)
            else:
                config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg,
                                        persist_config=False)
        except (ConfigException, OSError, TypeError, ValueError) as exc:
            raise InputError(where, f"cannot load the cluster configuration: {exc}") from None
        cfg.retries = 1
        self.server = cfg.host
        self.context = context
        self._api = client.ApiClient(cfg)

    def close(self) -> None:
        self._api.close()

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None:
        import urllib3

        try:
            response = self._api.call_api(path, "GET", query_params=list((query or {}).items()),
                                          header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                                          _preload_content=False, _request_timeout=TIMEOUT_S,
                                          _return_http_data_only=True)
        except urllib3.exceptions.HTTPError as exc:
            raise InputError(self.server, f"cluster unreachable: {_reason(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - the client's ApiException carries the status
            status = getattr(exc, "status", None)
            if status == 404:
                return None
            if status in (401, 403):
                raise InputError(self.server, _denied(status, path)) from None
            if status is None:
                raise InputError(self.server, f"cluster unreachable: {type(exc).__name__}: {exc}") from None
            raise InputError(self.server, f"GET {path}: HTTP {status} {getattr(exc, 'reason', '')}") from None
        return json.loads(response.data)


def _reason(exc: Exception) -> str:
    inner = getattr(exc, "reason", None)
    return f"{type(inner or exc).__name__}: {inner or exc}"


def _denied(status: int, path: str) -> str:
    if status == 401:
        return "the API server refused the credentials (HTTP 401 Unauthorized); check the kubeconfig user"
    return (f"missing RBAC: GET {path} is forbidden (HTTP 403); the preflight needs read access "
            "(get/list) to nodes, customresourcedefinitions, namespaces and, in the release namespace, secrets, "
            "persistentvolumeclaims, deployments and leases (docs/preflight.md lists the Role)")
