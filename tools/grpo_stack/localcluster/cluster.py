"""Start and stop the local cluster: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok, KubeRay,
the service proxy the operator reaches Ray heads through (serviceproxy.py), and Kueue when asked (`kueue=` the kueue
toolset's directory; kueue.py).

Every component listens on 127.0.0.1 only, on ports picked free at start. Nodes are kwok's (no kubelet, no
container runtime): kwok sets their status and moves pods through Pending -> Running (Ready) -> Succeeded for Job
and `helm test` pods. Pod IPs are kwok's bookkeeping; no traffic ever goes to them. A Service's cluster name reaches
a local process only where `route_service` says so.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import kueue as kueue_setup
from . import nodes, serviceproxy
from .certs import Certs, make_certs
from .crds import kuberay_crds
from .ports import free_port

HERE = Path(__file__).resolve().parent
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"  # the `kubernetes` Service's ClusterIP (first of SERVICE_CIDR)
POD_CIDR = "10.244.0.0/16"  # kwok's pod IP bookkeeping
# kwok's own stage files the build copies next to the binaries (binaries.py), plus ours.
KWOK_STAGES = ("node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
               "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml")
OWN_STAGES = (HERE / "stages" / "helm-test-complete.yaml", HERE / "stages" / "ray-submitter-exit.yaml")


class ControlPlaneError(RuntimeError):
    pass


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it dies, even by SIGKILL (Linux prctl)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def condition_true(obj: dict[str, Any], condition: str) -> bool:
    """`obj` has `condition` with status True; a missing or null `status.conditions` is not yet."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == condition and c.get("status") == "True" for c in conditions)


@dataclass
class Component:
    name: str
    cmd: list[str]
    health: str  # URL that answers 200 once the component is healthy
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    log: Path | None = None

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log and self.log.exists() else ""


def _get(url: str, timeout: float = 2.0) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # health ports of the scheduler/controller manager use self-made certs
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=ctx) as resp:  # noqa: S310 (loopback only)
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (OSError, urllib.error.URLError) as exc:
        return 0, str(exc)


class ControlPlane:
    """One control plane in `workdir`; `start()` returns once every component answers its health endpoint."""

    def __init__(self, tools: Path, kubectl_bin: Path, workdir: Path, *, start_timeout: float = 240.0,
                 operator_lease: bool = False, kueue: Path | None = None):
        self.tools = tools
        self.kueue_tools = kueue  # the kueue toolset's build (binaries.tools_dir("kueue")); None: no Kueue
        # The operator runs as a local process, invisible to the API; with a lease (as a real one holds) the live
        # preflight finds it as it finds an operator it cannot see the Deployment of.
        self.operator_lease = operator_lease
        self.kubectl_bin = kubectl_bin
        self.workdir = workdir
        self.start_timeout = start_timeout
        self.components: list[Component] = []
        self.kubeconfig = workdir / "kubeconfig"
        self.certs: Certs | None = None
        self._node_count = 0
        self.routes = workdir / "service-routes.json"
        self._choose_ports()

    def _choose_ports(self) -> None:
        self.api_port = free_port()
        self.server = f"https://127.0.0.1:{self.api_port}"
        self.proxy_port = free_port()

    # --- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> ControlPlane:
        """Start every component; once more, on new ports, if one found its port taken (another program bound it
        between the choice and the component's own bind)."""
        try:
            return self._start()
        except ControlPlaneError as exc:
            if "address already in use" not in str(exc):
                raise
        self.components = []
        self._choose_ports()
        return self._start()

    def _start(self) -> ControlPlane:
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.certs = make_certs(self.workdir / "pki", SERVICE_IP)
        self._write_kubeconfig()
        try:
            self._launch(self._etcd())
            self._launch(self._apiserver())
            self._install_crds()
            for component in (self._controller_manager(), self._scheduler(), self._kwok(), self._service_proxy(),
                              self._operator()):
                self._launch(component, wait=False)
            for component in self.components:
                self._wait_healthy(component)
            if self.kueue_tools:
                self._start_kueue()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM every component (newest first), SIGKILL what is left after 10 s; safe to call twice."""
        for component in reversed(self.components):
            if component.proc and component.proc.poll() is None:
                os.killpg(component.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for component in reversed(self.components):
            if not component.proc:
                continue
            try:
                component.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(component.proc.pid, signal.SIGKILL)
                component.proc.wait(timeout=10)

    def health(self) -> dict[str, int]:
        """Component name -> HTTP status of its health endpoint now."""
        return {c.name: _get(c.health)[0] for c in self.components}

    def _launch(self, component: Component, wait: bool = True) -> None:
        component.log = self.workdir / "logs" / f"{component.name}.log"
        with component.log.open("wb") as log:
            component.proc = subprocess.Popen(  # noqa: S603
                component.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.workdir, env={**os.environ, **component.env}, start_new_session=True,
                preexec_fn=_die_with_parent)
        self.components.append(component)
        if wait:
            self._wait_healthy(component)

    def _wait_healthy(self, component: Component) -> None:
        deadline = time.monotonic() + self.start_timeout
        status, body = 0, ""
        while time.monotonic() < deadline:
            if component.proc and component.proc.poll() is not None:
                raise ControlPlaneError(f"{component.name} exited with {component.proc.returncode}:\n"
                                        f"{component.log_tail()}")
            status, body = _get(component.health)
            if status == 200:
                return
            time.sleep(0.5)
        raise ControlPlaneError(f"{component.name} did not answer {component.health} with 200 within "
                                f"{self.start_timeout:.0f}s (last: {status} {body[:300]}):\n{component.log_tail()}")

    # --- components ---------------------------------------------------------------------------------------------
    def _bin(self, name: str) -> str:
        return str(self.tools / name)

    def _etcd(self) -> Component:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        return Component("etcd", [
            self._bin("etcd"), "--name=default", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}", f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=default=http://127.0.0.1:{peer}", "--unsafe-no-fsync", "--log-level=warn",
        ], f"{self.etcd_url}/health")

    def _apiserver(self) -> Component:
        c = self.certs
        assert c is not None
        return Component("kube-apiserver", [
            self._bin("kube-apiserver"), f"--etcd-servers={self.etcd_url}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={self.api_port}",
            f"--tls-cert-file={c.server_cert}", f"--tls-private-key-file={c.server_key}", f"--client-ca-file={c.ca}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={c.sa_pub}", f"--service-account-signing-key-file={c.sa_key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--authorization-mode=Node,RBAC",
            # No real endpoint for the `kubernetes` Service: a loopback address is not a valid endpoint.
            "--endpoint-reconciler-type=none", "--allow-privileged=true", "--profiling=false", "--v=0",
        ], f"{self.server}/readyz")

    def _component_flags(self, port: int) -> list[str]:
        k = self.kubeconfig
        return [f"--kubeconfig={k}", f"--authentication-kubeconfig={k}", f"--authorization-kubeconfig={k}",
                "--bind-address=127.0.0.1", f"--secure-port={port}", "--leader-elect=false"]

    def _controller_manager(self) -> Component:
        c = self.certs
        assert c is not None
        port = free_port()
        return Component("kube-controller-manager", [
            self._bin("kube-controller-manager"), *self._component_flags(port),
            f"--service-account-private-key-file={c.sa_key}", f"--root-ca-file={c.ca}",
            "--use-service-account-credentials=false", f"--cluster-signing-cert-file={c.ca}",
            f"--cluster-signing-key-file={c.ca_key}",
        ], f"https://127.0.0.1:{port}/healthz")

    def _scheduler(self) -> Component:
        port = free_port()
        return Component("kube-scheduler", [self._bin("kube-scheduler"), *self._component_flags(port)],
                         f"https://127.0.0.1:{port}/healthz")

    def _kwok(self) -> Component:
        port = free_port()
        stages = [self.tools / "kwok-stages" / s for s in KWOK_STAGES] + list(OWN_STAGES)
        return Component("kwok", [
            self._bin("kwok"), f"--kubeconfig={self.kubeconfig}", "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake", "--node-ip=127.0.0.1",
            f"--cidr={POD_CIDR}", "--node-lease-duration-seconds=40", f"--server-address=127.0.0.1:{port}",
            *[f"--config={s}" for s in stages],
        ], f"http://127.0.0.1:{port}/healthz", env={"HOME": str(self.workdir)})  # no ~/.kwok/kwok.yaml leaks in

    def _service_proxy(self) -> Component:
        # Run by its file (it needs the standard library only): the same code as this process's, however the
        # package is installed or put on the path.
        return Component("service-proxy", [
            sys.executable, serviceproxy.__file__, f"--port={self.proxy_port}", f"--routes={self.routes}",
        ], f"http://127.0.0.1:{self.proxy_port}/healthz")

    def _operator(self) -> Component:
        probe, metrics = free_port(), free_port()
        return Component("kuberay-operator", [
            self._bin("kuberay-operator"), f"--health-probe-bind-address=127.0.0.1:{probe}",
            f"--metrics-addr=127.0.0.1:{metrics}", "--log-stdout-encoder=console",
            *(["--enable-leader-election=true", "--leader-election-namespace=kube-system"] if self.operator_lease
              else ["--enable-leader-election=false"]),
        ], f"http://127.0.0.1:{probe}/readyz", env={
            "KUBECONFIG": str(self.kubeconfig),
            # Its dashboard client (net/http) reaches a Service's cluster name through the service proxy; the API
            # server, on loopback, never goes through a proxy.
            # Both spellings: Go takes an empty upper-case one as unset and would read the lower-case one.
            "HTTP_PROXY": f"http://127.0.0.1:{self.proxy_port}", "http_proxy": f"http://127.0.0.1:{self.proxy_port}",
            "NO_PROXY": "", "no_proxy": ""})

    def _start_kueue(self) -> None:
        """Kueue's CRDs, the process (its webhook server up), then the webhook configurations that point at it:
        registered last, so no API call waits on a webhook that does not answer yet."""
        tools, c = self.kueue_tools, self.certs
        assert tools is not None and c is not None
        health, webhook = free_port(), free_port()
        crds = kueue_setup.crds(tools, webhook, c.ca)
        self.apply(crds)
        self.wait_established(*[d["metadata"]["name"] for d in crds])
        self.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": kueue_setup.NAMESPACE}}])
        config = self.workdir / "kueue-config.yaml"
        certs = kueue_setup.cert_dir(self.workdir / "kueue-certs", c.server_cert, c.server_key)
        config.write_text(yaml.safe_dump(kueue_setup.configuration(health, webhook, certs)))
        command = [str(tools / "kueue"), f"--config={config}", f"--visibility-server-port={free_port()}",
                   "--feature-gates=VisibilityOnDemand=false", "--zap-encoder=console"]
        self._launch(Component("kueue", self._with_kueue_metrics_certs(command, c.server_cert, c.server_key),
                               f"http://127.0.0.1:{health}/readyz", env={"KUBECONFIG": str(self.kubeconfig)}))
        self.apply(kueue_setup.webhook_configurations(tools, webhook, c.ca))

    def _with_kueue_metrics_certs(self, command: list[str], cert: Path, key: Path) -> list[str]:
        """Kueue v0.17.0 reads its metrics certificate from /etc/kueue/metrics/certs whenever its own certificate
        management is off (cmd/kueue/main.go), as a pod would have it mounted. Here it runs in a mount namespace of
        its own whose /etc is an overlay holding that file: the machine's /etc is never written. Needs root and
        unshare(1), as mounting does."""
        if os.geteuid() != 0 or not shutil.which("unshare"):
            raise ControlPlaneError("Kueue reads its metrics certificate from /etc/kueue/metrics/certs; the local "
                                    "cluster mounts one there in a private mount namespace, which needs root and "
                                    "unshare(1)")
        layer = self.workdir / "kueue-etc"
        certs = layer / "upper" / "kueue" / "metrics" / "certs"
        certs.mkdir(parents=True, exist_ok=True)
        (layer / "work").mkdir(exist_ok=True)
        shutil.copyfile(cert, certs / "tls.crt")
        shutil.copyfile(key, certs / "tls.key")
        mount = (f"mount -t overlay overlay -o lowerdir=/etc,upperdir={layer / 'upper'},workdir={layer / 'work'} /etc"
                 ' && exec "$@"')
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", mount, "sh", *command]

    def _write_kubeconfig(self) -> None:
        c = self.certs
        assert c is not None
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "grpo-stack-local",
            "clusters": [{"name": "grpo-stack-local",
                          "cluster": {"server": self.server, "certificate-authority": str(c.ca)}}],
            "users": [{"name": "admin", "user": {"client-certificate": str(c.admin_cert),
                                                 "client-key": str(c.admin_key)}}],
            "contexts": [{"name": "grpo-stack-local", "context": {"cluster": "grpo-stack-local", "user": "admin"}}],
        }
        self.kubeconfig.write_text(yaml.safe_dump(config))

    # --- CRDs -----------------------------------------------------------------------------------------------------
    def _install_crds(self) -> None:
        self.apply(kuberay_crds(self.tools / "kuberay-crds"))
        self.wait_established("rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io")

    def wait_established(self, *crds: str) -> None:
        """CRDs served, within the start-up bound: on two busy cores (a vLLM engine starting beside it) the API
        server took over 60 s to establish Kueue's."""
        self.wait_for_condition("Established", *[f"crd/{c}" for c in crds])

    def wait_for_condition(self, condition: str, *refs: str, timeout: float | None = None) -> None:
        """Every object in `refs` (`kind/name`) has `condition` True, within `timeout` (default: the start-up
        bound). Polled here rather than by `kubectl wait`, which fails outright when it reads an object whose
        `status.conditions` is still null: a CRD's is, between its creation and the API server naming it."""
        bound = self.start_timeout if timeout is None else timeout
        deadline = time.monotonic() + bound
        while True:
            items = self.get(*refs)
            items = items.get("items", [items])
            waiting = [f"{o['kind'].lower()}/{o['metadata']['name']}" for o in items
                       if not condition_true(o, condition)]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"{', '.join(waiting)} not {condition} after {bound:.0f} s")
            time.sleep(0.25)

    # --- what `grpo-cluster` and the tests use ----------------------------------------------------------------
    def route_service(self, name: str, target: str) -> None:
        """From now on the operator's requests for the Service name `name` (`<svc>.<ns>.svc.cluster.local:<port>`,
        as a RayJob's status.dashboardURL gives it) reach `target` (`127.0.0.1:<port>`): a Ray head run here."""
        serviceproxy.route(self.routes, name, target)

    def env(self) -> dict[str, str]:
        """Environment for helm/kubectl subprocesses that should talk to this API server."""
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig)}

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,  # noqa: A002
                timeout: float = 120) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(self.kubectl_bin), f"--kubeconfig={self.kubeconfig}", *args], input=input,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def get(self, *args: str) -> Any:
        """`kubectl get ... -o json`, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def apply(self, objects: list[dict[str, Any]], *args: str) -> None:
        docs = {"apiVersion": "v1", "kind": "List", "items": objects}
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", *args, input=json.dumps(docs))

    def create_nodes(self, instance_type: str, count: int = 1, *, labels: dict[str, str] | None = None,
                     taints: list[dict[str, str]] | None = None, wait: bool = True, row=None) -> list[str]:
        """`count` new kwok nodes of `instance_type` (nodes.py); waits until kwok marks them
        Ready. Names are unique within the control plane."""
        names, objects = [], []
        for _ in range(count):
            self._node_count += 1
            name = f"kwok-{instance_type.replace('.', '-')}-{self._node_count}"
            names.append(name)
            objects.append(nodes.node_object(name, instance_type, labels=labels, taints=taints, row=row))
        self.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        if wait:
            self.wait_for_condition("Ready", *[f"node/{n}" for n in names])
        return names

    def ensure_nodes(self, instance_type: str, count: int, **kwargs: Any) -> list[str]:
        """At least `count` nodes of `instance_type` with these labels; creates only the missing ones."""
        selector = ",".join([f"{nodes.INSTANCE_TYPE_LABEL}={instance_type}",
                             *(f"{k}={v}" for k, v in (kwargs.get("labels") or {}).items())])
        have = [n["metadata"]["name"] for n in self.get("nodes", "-l", selector)["items"]]
        if len(have) < count:
            have += self.create_nodes(instance_type, count - len(have), **kwargs)
        return have

    def create_namespace(self, name: str, *, enforce: str = "restricted", warn: str = "restricted") -> None:
        """A namespace whose Pod Security admission enforces `enforce` (and warns/audits at `warn`); waits for its
        `default` ServiceAccount (the ServiceAccount admission plugin refuses pods until it exists)."""
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {
            "pod-security.kubernetes.io/enforce": enforce, "pod-security.kubernetes.io/enforce-version": "v1.34",
            "pod-security.kubernetes.io/warn": warn, "pod-security.kubernetes.io/audit": warn}}}
        self.apply([ns])
        deadline = time.monotonic() + 60
        while self.kubectl("-n", name, "get", "serviceaccount", "default", check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"namespace {name} has no default ServiceAccount after 60s")
            time.sleep(0.5)
