"""GRPO820 unauthenticated-api-exposed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..finding import Hit, Severity
from ..shell import scripts
from ._accelerators import asked as accelerators_asked
from ._objects import containers
from ._podsecurity import namespace_of
from ._services import Backend, ServicePort, backends, target_containers
from ._serving import (
    NOTEBOOK_PROGRAMS,
    TOKEN_FLAG,
    argv,
    command_programs,
    is_model_server,
    is_notebook,
    is_ollama,
    jupyter_token_off,
    server_family,
)

CODE = "GRPO820"
NAME = "unauthenticated-api-exposed"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = ("A LoadBalancer, NodePort, Ingress, OpenShift Route, HTTPRoute or host port fronts an API with no "
           "authentication: an inference server without an API key, a notebook without a token, or the Ray "
           "dashboard / job API / client.")
DOC = """## What it does
Follows every way traffic from outside the cluster reaches a pod: a Service of `type: LoadBalancer` or
`NodePort`, an Ingress, an OpenShift `Route` (public on the cluster's router like an Ingress; plain HTTP where
`tls` is absent or `insecureEdgeTerminationPolicy: Allow`) or a Gateway API `HTTPRoute` / `GRPCRoute` backend, and
KubeRay's own head Service (`headGroupSpec.serviceType`, `headService`, with the cluster's
`headServiceAnnotations`) and Ingress (`enableIngress: true`). Each
is followed through the Service's selector (and the labels controllers add) and its target port to the container
behind it, in any controller. Reported when that container is:

- an OpenAI-compatible or TGI inference server (vLLM, SGLang, Text Generation Inference, LMDeploy) started
  without an API key (`--api-key`, `--api-keys`, `VLLM_API_KEY`, TGI's `API_KEY`); TGI also as a build of it run
  as its image's own entrypoint with TGI's `--model-id`, and any of them started by a script the container runs
  from a configMap volume;
- a Triton Inference Server (without `--http-restricted-api` / `--grpc-restricted-protocol`), TensorFlow
  Serving or Ollama (`ollama serve`, or the ollama image's own entrypoint, on the port its `OLLAMA_HOST` names,
  11434 by default), which have no authentication of their own;
- a Gradio app (a warning: its authentication, if any, is in its code);
- a Jupyter server with its token switched off (`--ServerApp.token=''`, `--NotebookApp.token=''`,
  `--LabApp.token=''`, which Jupyter Server passes on to ServerApp);
- a server given an empty key (`--api-key $API_KEY` where the container's env sets `API_KEY: ""`, or an empty
  `VLLM_API_KEY`), which then takes none;
- a vLLM, SGLang or Jupyter server whose only credential is written in the manifests (`--api-key sk-team`,
  `--LabApp.token='password'`, a variable the flag expands that the env sets literally, a literal `VLLM_API_KEY` or
  `JUPYTER_TOKEN` value; not one read from a Secret): a warning, since anyone who reads the files can present it
  (the assumption named: more people read them than should call the server);
- a Ray head on the dashboard / job-submission port (8265) or the Ray client port (10001), on a cluster without
  Ray token authentication (`authOptions: {mode: token}`, `RAY_AUTH_MODE=token`).

A `LoadBalancer` / `NodePort` Service whose pods are applied from another file is judged by its own name,
selector and ports: one that names a model server (Triton, TensorFlow Serving, vLLM, TGI, SGLang, Gradio, a Ray
head) on that server's default port is a warning; so is one, whatever its name, that targets the default port of
a server without authentication of its own (8000, 8001, 8500, 8501, 30000, 23333, 11434, 7860, 8888, 5555, 8265,
10001), the assumption named.

A container port bound on the node's own address (`hostPort`, or `hostNetwork: true`) is reached with no Service
at all: a server named above bound so is a warning (the node's address may be private), and so is a `hostPort` of
any other container that names no API key or token, except a DaemonSet's (node agents: exporters, log shippers)
and the ports 80 and 443 an ingress controller takes on its node.

Recognised by shape as well, each a warning (what authenticates may be outside these files):
- a public `LoadBalancer` or a `NodePort` in front of pods whose server no rule above can name (named as an
  accelerator server when they request a GPU, TPU, Neuron device or Gaudi: a model server started through a
  wrapper), and a public Ingress that routes to such pods or, applied apart from its Service, to a server's
  default port (above). A pod that names an API key or a token in its env, or a login password it reads from a
  Secret (MinIO's `MINIO_ROOT_PASSWORD`, Grafana's admin password), is taken to check its callers, unless the
  name is that of a service the pod calls (`HF_TOKEN`, `WANDB_API_KEY`, `OPENAI_API_KEY`, `AWS_...`,
  `GITHUB_TOKEN`; a database's or a broker's password, `DB_PASSWORD`, `REDIS_PASSWORD`): the credential it
  presents to the Hub, a provider or a store, not one it asks of its callers;
- a `NodePort` in front of a server that asks its callers for an API key (an `--api-key` flag, an `API_KEY` env
  it does not present to a provider) over plain HTTP, its flags and env setting up no TLS (`--ssl-certfile`): the
  key reaches every node's port in clear text (the assumption named: nothing in front of the node ports terminates
  TLS; a load balancer may terminate it by means the files do not show, so one is not reported);
- a public Ingress (or route) without `tls` in front of a server that asks its callers for a credential: an
  `--api-key` flag, an env named for its own key, token or login (`API_KEY`, `VLLM_API_KEY`, `JUPYTER_TOKEN`,
  `PASSWORD`, a root or admin password read from a Secret; not `VENDOR_API_KEY`, which may be the key the app
  presents to that vendor), or a Jupyter server (which takes a token unless it is switched off): callers send it
  over plain HTTP (the assumption named: nothing in front of the ingress terminates TLS);
- a Gateway API `Gateway` whose every listener is plain (`HTTP`, `TCP`) and whose class does not say `internal`:
  the routes attached to it are served unencrypted;
- `serviceType: LoadBalancer` or `NodePort` anywhere in a custom resource: its operator creates that Service for
  what the resource runs (KubeRay's head Service is followed to the head pod instead);
- a Knative Service (`serving.knative.dev`) whose container serves an API named above, without the
  `networking.knative.dev/visibility: cluster-local` label: Knative publishes it on the cluster's external domain.

A Traefik `IngressRoute` is read as an Ingress (its `tls`, its routes' Services); one whose routes pass through
middlewares (which may authenticate) is not reported.

An internal load balancer (the AWS, GCP, Azure and Oracle internal annotations, Alibaba Cloud's `address-type:
intranet`, an `internal` ALB scheme), a `loadBalancerSourceRanges` / allow-list, a `NodePort` and an HTTPRoute
(whose Gateway may authenticate) are warnings; an Ingress with an authentication annotation
(`nginx.ingress.kubernetes.io/auth-url`, `auth-type`, `alb.ingress.kubernetes.io/auth-type`) is not reported.

## Why is this bad?
The Ray job API runs any command it is sent, with the pod's credentials and volumes; a notebook without a token
is a shell; an inference server without a key serves GPU time to whoever finds the address (and vLLM's and
SGLang's APIs load LoRA adapters and tokenizers from paths the caller names). Scanners find such endpoints
within hours of a load balancer getting a public address.

## Example
```yaml
kind: Service
spec:
  type: LoadBalancer
  selector: {app: vllm}
  ports: [{port: 80, targetPort: 8000}]
```
Use instead:
```yaml
spec:
  type: ClusterIP   # and reach it with kubectl port-forward, or put an authenticating gateway in front
```
with `--api-key` (from a Secret: `--api-key=$(VLLM_API_KEY)`) on the server if it must be reachable.

## Fix
Keep the Service `ClusterIP` (reach it with `kubectl port-forward`), or give the server its own authentication
(`--api-key` from a Secret, a notebook token, Ray `authOptions: {mode: token}`) or put an authenticating proxy
in front, and restrict the load balancer's source ranges.
"""

INTERNAL = re.compile(r"internal", re.IGNORECASE)
INTERNAL_KEYS = ("service.beta.kubernetes.io/aws-load-balancer-internal",
                 "service.beta.kubernetes.io/aws-load-balancer-scheme", "networking.gke.io/load-balancer-type",
                 "cloud.google.com/load-balancer-type", "service.beta.kubernetes.io/azure-load-balancer-internal",
                 "alb.ingress.kubernetes.io/scheme", "kubernetes.io/ingress.class",
                 "service.beta.kubernetes.io/oci-load-balancer-internal")
# The API groups of the routes read, and the routes that are public by default (an Ingress, an OpenShift Route on
# the cluster's router, a Traefik IngressRoute on Traefik's entry points); a Gateway API route's exposure is its
# Gateway's.
ROUTE_GROUPS = {"Ingress": ("",), "HTTPRoute": ("gateway.networking.k8s.io/",),
                "GRPCRoute": ("gateway.networking.k8s.io/",), "Route": ("route.openshift.io/",),
                "IngressRoute": ("traefik.io/", "traefik.containo.us/")}
PUBLIC_ROUTES = frozenset({"Ingress", "Route", "IngressRoute"})
ALLOW_LIST = ("haproxy.router.openshift.io/ip_whitelist", "haproxy.router.openshift.io/ip_allowlist",
              "nginx.ingress.kubernetes.io/whitelist-source-range",
              "nginx.ingress.kubernetes.io/allowlist-source-range", "alb.ingress.kubernetes.io/inbound-cidrs")
AUTH_ANNOTATIONS = ("nginx.ingress.kubernetes.io/auth-url", "nginx.ingress.kubernetes.io/auth-type",
                    "alb.ingress.kubernetes.io/auth-type", "traefik.ingress.kubernetes.io/router.middlewares",
                    "konghq.com/plugins", "nginx.org/basic-auth-secret")
RAY_HEAD_PORTS = {8265: "the Ray dashboard and job API", 10001: "the Ray client server"}
RAY_PORT_NAMES = {"dashboard": 8265, "client": 10001}
API_KEY_FLAG = re.compile(r"--api-keys?(?:=|\s+)(?:'([^']*)'|\"([^\"]*)\"|(\S+))")


@dataclass(frozen=True)
class Api:
    what: str  # "the vLLM OpenAI API"
    ports: frozenset  # ports it listens on
    seen: bool = True  # False: any authentication would be in the app's code, which the manifest cannot show
    # How its callers are (not) authenticated, as the message says it: none, or only by a credential written in
    # the manifests, which anyone who reads them can present (a warning naming that assumption).
    auth: str = "with no authentication"


def _flag_values(pattern: re.Pattern, text: str) -> list[str]:
    return [next((g for g in m.groups() if g is not None), "") for m in pattern.finditer(text)]


def _written(value: object) -> bool:
    """A credential's value written out in the manifest: a string that expands no variable (nor the next flag)."""
    return isinstance(value, str) and bool(value) and "$" not in value and not value.startswith("-")


VARIABLE = re.compile(r"['\"]?\$\{?([A-Za-z_]\w*)\}?['\"]?")


def _written_key(text: str, env: dict, flag: re.Pattern, env_name: str = "") -> str:
    """The flag or variable whose credential the manifest writes out ('' where it is read from elsewhere): a
    literal value of the flag, a variable it expands that the container's env sets literally, or `env_name` set
    literally."""
    for value in _flag_values(flag, text):
        if _written(value):
            return "key" if flag is API_KEY_FLAG else "token"
        m = VARIABLE.fullmatch(value)
        if m and _written(env.get(m.group(1))):
            return m.group(1)
    return env_name if env_name and _written(env.get(env_name)) else ""


def _written_auth(written: str, flag: str) -> str:
    return WRITTEN_AUTH.format(what=f"a {flag}" if written in ("key", "token") else f"the {written} value")


def _empty(value: str, env: dict) -> bool:
    """A key that is empty, or expands a variable the container's env sets to an empty literal (`--api-key
    $API_KEY` with `API_KEY: ""`): the server then takes no key."""
    m = VARIABLE.fullmatch(value)
    return value == "" or (m is not None and env.get(m.group(1)) == "")


def _keyed(text: str, env: dict) -> bool:
    """The command gives the server an API key that is not empty."""
    values = _flag_values(API_KEY_FLAG, text)
    return any(not _empty(v, env) for v in values) or (not values and bool(re.search(r"--api-keys?\b", text)))


def _set(env: dict, name: str) -> bool:
    """An env variable the container sets, to anything but an empty literal (a Secret's value counts)."""
    return name in env and env[name] != ""


WRITTEN_AUTH = ("authenticated only by {what} written in these files, which anyone who reads them can present "
                "(assumed: more people read them than should call the server)")


def _env_names(c: dict) -> dict[str, object]:
    return {str(e.get("name")): e.get("value", e.get("valueFrom")) for e in c.get("env") or [] if isinstance(e, dict)}


def _port_flag(text: str, flag: str = "--port") -> int | None:
    m = re.search(rf"{flag}[= ]+['\"]?(\d+)", text)
    return int(m.group(1)) if m else None


def unauthenticated_api(c: dict, ray_head: bool, ray_token_auth: bool) -> Api | None:
    """The unauthenticated API the container serves, or None (none, or it authenticates callers)."""
    text, env, image = argv(c), _env_names(c), str(c.get("image", ""))
    words = command_programs(c)
    keyed = _keyed(text, env)
    image_entrypoint = not text.strip() or text.lstrip().startswith("--")  # the image's own server, flags only
    vllm_image = "vllm-openai" in image or ("vllm" in server_family(image) and is_model_server(c))
    if "vllm serve" in text or "vllm.entrypoints" in text or (vllm_image and image_entrypoint):
        port = frozenset({_port_flag(text) or 8000})
        written = _written_key(text, env, API_KEY_FLAG, "VLLM_API_KEY")
        if written:
            return Api("the vLLM OpenAI-compatible API", port, seen=False, auth=_written_auth(written, "API key"))
        if keyed or _set(env, "VLLM_API_KEY"):
            return None
        return Api("the vLLM OpenAI-compatible API", port)
    if "sglang.launch_server" in text or "sglang serve" in text:
        port = frozenset({_port_flag(text) or 30000})
        written = _written_key(text, env, API_KEY_FLAG)
        if written:
            return Api("the SGLang API", port, seen=False, auth=_written_auth(written, "API key"))
        return None if keyed else Api("the SGLang API", port)
    # TGI's launcher, or a build of it (a Gaudi image) run as the image's own entrypoint with its `--model-id`
    launcher = image_entrypoint and bool(re.search(r"(?:^|\s)--model-id\b", text)) and "vllm" not in image
    if "text-generation-launcher" in words or ("text-generation-inference" in image and "python" not in words) \
            or launcher:
        if keyed or _set(env, "API_KEY"):
            return None
        port = _port_flag(text) or (int(env["PORT"]) if str(env.get("PORT", "")).isdigit() else None)
        named = "text-generation" in f"{image} {text}" or "tgi" in image
        return Api("the Text Generation Inference API" if named else
                   "the API of a Hugging Face inference launcher (--model-id)",
                   frozenset({port} if port else {80, 3000}))
    if "lmdeploy serve api_server" in text:
        return None if keyed else Api("the LMDeploy API", frozenset({_port_flag(text, "--server-port") or 23333}))
    if "tritonserver" in words or ("tritonserver" in image and image_entrypoint):
        if "--http-restricted-api" in text or "--grpc-restricted-protocol" in text:
            return None
        return Api("the Triton inference API", frozenset({_port_flag(text, "--http-port") or 8000,
                                                          _port_flag(text, "--grpc-port") or 8001}))
    if "tensorflow_model_server" in words or ("tensorflow/serving" in image and image_entrypoint):
        return Api("the TensorFlow Serving API", frozenset({_port_flag(text) or 8500,
                                                            _port_flag(text, "--rest_api_port") or 8501}))
    if words & NOTEBOOK_PROGRAMS:
        port = frozenset({_port_flag(text) or 8888})
        if jupyter_token_off(c):
            return Api("a Jupyter server with its token switched off", port)
        written = _written_key(text, env, TOKEN_FLAG, "JUPYTER_TOKEN")
        if written:
            return Api("a Jupyter server", port, seen=False, auth=_written_auth(written, "token"))
    if "gradio" in image or "gradio" in words:
        declared = {p["containerPort"] for p in c.get("ports") or [] if isinstance(p, dict)
                    and isinstance(p.get("containerPort"), int)}
        return Api("a Gradio app (any authentication would be in its code; none is configured here)",
                   frozenset(declared or {7860}), seen=False)
    if is_ollama(c):  # Ollama has no authentication of its own; its image listens on OLLAMA_HOST, 0.0.0.0:11434
        bound = re.search(r":(\d+)\s*$", str(env.get("OLLAMA_HOST") or ""))
        return Api("the Ollama API", frozenset({int(bound.group(1)) if bound else 11434}))
    head = ray_head or bool(re.search(r"\bray start\b.*--head\b", text))
    if head and not ray_token_auth and str(env.get("RAY_AUTH_MODE", "")).lower() != "token":
        return Api("the Ray head", frozenset(RAY_HEAD_PORTS))
    return None


def _ray_token_auth(o, pod_path: str) -> bool:
    """KubeRay's `authOptions: {mode: token}` on the cluster the pod belongs to."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    for key in ("rayClusterSpec", "rayClusterConfig"):
        if f".{key}." in f".{pod_path}":
            spec = spec.get(key) if isinstance(spec.get(key), dict) else {}
    auth = spec.get("authOptions") if isinstance(spec.get("authOptions"), dict) else {}
    return str(auth.get("mode", "")).lower() == "token"


def _is_ray_head(ctx, o, pod_path: str) -> bool:
    return ctx.pod_labels(o, pod_path).get("ray.io/node-type") == "head"


def _exposed_apis(ctx, b: Backend, ports: list[ServicePort]) -> Iterator[tuple[str, str, bool, str]]:
    """(description of the pod and container, what is exposed, whether the missing authentication is seen, how its
    callers are authenticated) for each unauthenticated API behind these ports."""
    for o, pod_path, pod in b.pods:
        head, token = _is_ray_head(ctx, o, pod_path), _ray_token_auth(o, pod_path)
        for p in ports:
            declared = list(target_containers(pod, p.target))
            candidates = declared or list(containers(pod))
            for _f, i, c in candidates:
                api = unauthenticated_api(_as_run(ctx, c), head and c is _first(pod), token)
                if api is None or _follower(o, pod_path, c, api):
                    continue
                port = _number(pod, c, p.target)
                if port in api.ports:
                    what = RAY_HEAD_PORTS.get(port, api.what) if api.what == "the Ray head" else api.what
                    yield f"{o.kind} {o.name} (container {c.get('name', i)}, port {port})", what, api.seen, api.auth


def _as_run(ctx, c: dict) -> dict:
    """The container as it runs: where its command runs a script a configMap volume mounts, that script's text in
    place of the command (what the server's flags are is there)."""
    mounted = ctx.derived("mounted-script-by-container",
                          lambda: {id(s.container): s.source for s in scripts(ctx) if s.config_map})
    source = mounted.get(id(c))
    return c if source is None else {**c, "command": ["bash", "-c", source], "args": []}


def _follower(o, pod_path: str, c: dict, api: Api) -> bool:
    """An SGLang node of rank 1 and up serves no HTTP API (only rank 0 does): a LeaderWorkerSet's worker template,
    whose pods are the group's ranks after the leader, starting SGLang with `--node-rank`."""
    return (o.kind == "LeaderWorkerSet" and ".workerTemplate." in f".{pod_path}."
            and api.what == "the SGLang API" and "--node-rank" in argv(c))


def _first(pod: dict):
    items = pod.get("containers") or []
    return items[0] if items else None


def _number(pod: dict, c: dict, target) -> int | None:
    if isinstance(target, int):
        return target
    if str(target).isdigit():
        return int(target)
    for p in c.get("ports") or []:
        if isinstance(p, dict) and p.get("name") == target and isinstance(p.get("containerPort"), int):
            return p["containerPort"]
    return RAY_PORT_NAMES.get(str(target))


# Annotations whose value names a private address rather than saying "internal": Alibaba Cloud's load balancer
# `address-type` (`internet` or `intranet`, its cloud controller manager's Service annotations).
PRIVATE_ADDRESS = {"service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type": "intranet"}


def _internal(annotations: dict) -> bool:
    return any(INTERNAL.search(str(annotations.get(k, ""))) or (k.endswith("-internal") and str(
        annotations.get(k, "")).lower() in ("true", "0.0.0.0/0")) for k in INTERNAL_KEYS if k in annotations) or any(
        str(annotations.get(k, "")).lower() == v for k, v in PRIVATE_ADDRESS.items())


def _severity(limited: bool) -> Severity | None:
    return Severity.WARNING if limited else None


def _service_exposure(ctx, all_backends: list[Backend]) -> Iterator[Hit]:
    for b in all_backends:
        if b.type not in ("LoadBalancer", "NodePort"):
            continue
        limited = b.type == "NodePort" or b.source_ranges or _internal(b.annotations)
        path = "spec.type" if b.obj.kind == "Service" else f"{b.path}.serviceType"
        if b.obj.kind != "Service" and "headService" in str((_node(b.obj.obj, b.path) or {}).keys()):
            path = f"{b.path}.headService.spec.type"
        exposed = _dedup(_exposed_apis(ctx, b, b.ports))
        for where, what, seen, auth in exposed:
            yield Hit(path, f"Service {b.name} ({b.type}) exposes {what} of {where} {auth}",
                      obj=b.obj, severity=_severity(limited or not seen))
        if not b.pods and b.obj.kind == "Service":
            named = _named_server(b)
            if named:
                yield Hit(path, f"Service {b.name} ({b.type}) selects no pod in these files; its name, selector and "
                          f"ports are those of {named}, which has no authentication of its own",
                          obj=b.obj, severity=Severity.WARNING)
            elif not (b.source_ranges or _internal(b.annotations)):
                port, what = _default_port(b)
                if port:
                    yield Hit(path, f"Service {b.name} ({b.type}) selects no pod in these files and gives port {port} "
                              f"an address outside the cluster; {port} is the default port of {what}, which has no "
                              "authentication of its own (assumed: the pods behind it serve that)",
                              obj=b.obj, severity=Severity.WARNING)
        elif b.pods and not (b.source_ranges or _internal(b.annotations)) and not exposed:
            if not any(_named_or_keyed(ctx, o, pod_path, pod) for o, pod_path, pod in b.pods):
                yield from _unnamed_server(b, path)
            elif b.type == "NodePort":
                yield from _key_in_clear_text(b, path)


KNOWN_SERVERS = ("vllm", "sglang", "text-generation", "lmdeploy", "tritonserver", "tensorflow_model_server",
                 "tensorflow/serving", "jupyter", "gradio", "ray start")
# Servers an image names that are no model engine; a model engine's name in an image counts only where the
# container runs the engine's own entrypoint, which is_model_server reads (a `vllm-playground` web UI is no vLLM).
IMAGE_SERVERS = ("jupyter", "gradio", "tensorflow/serving")


def _named_or_keyed(ctx, o, pod_path: str, pod: dict) -> bool:
    """The pod runs a server the checks above judge (exposed or authenticated), or says it takes an API key."""
    if _is_ray_head(ctx, o, pod_path):
        return True
    for _f, _i, c in containers(pod):
        text, image = argv(c).lower(), str(c.get("image", "")).lower()
        if (any(word in text for word in KNOWN_SERVERS) or any(word in image for word in IMAGE_SERVERS)
                or (any(word in image for word in KNOWN_SERVERS) and is_model_server(c))
                or re.search(r"api[-_]?keys?\b", f"{text} {image}")
                or any(_own_credential(name, value) for name, value in _env_names(c).items())):
            return True
    return False


def _own_credential(name: str, value: object) -> bool:
    """An env entry for a credential the server asks of its callers: an API key, a token, or its own login password
    read from a Secret (MinIO's root password, Grafana's admin password); not one it presents to a service it calls,
    nor a password written in the manifest, which anyone who reads the files can present."""
    upper = name.upper()
    if OUTBOUND_CREDENTIAL.match(name):
        return False
    if "API_KEY" in upper or "TOKEN" in upper:
        return True
    return (("PASSWORD" in upper or "PASSWD" in upper) and isinstance(value, dict)
            and not OUTBOUND_PASSWORD.match(name))


# A credential named for a service the pod calls (the Hugging Face Hub, Weights & Biases, a model provider, a
# cloud, a code host): the key the app presents to that service, not one it asks of its own callers.
OUTBOUND_CREDENTIAL = re.compile(
    r"^(?:HF|HUGGING_?FACE(?:_HUB)?|WANDB|OPENAI|AZURE_OPENAI|ANTHROPIC|COHERE|MISTRAL|GROQ|TOGETHER|GEMINI|GOOGLE|"
    r"AWS|AZURE|GCP|NGC|NVIDIA|KAGGLE|GITHUB|GH|GITLAB|PINECONE|QDRANT|WEAVIATE|LANGCHAIN|LANGSMITH|SLACK|"
    r"DISCORD|TELEGRAM|MLFLOW|COMET|NEPTUNE)_", re.IGNORECASE)


# A password named for a store or service the pod logs in to (a database, a cache, a broker, a mail or directory
# server): the one it presents, not one it asks of its callers.
OUTBOUND_PASSWORD = re.compile(r"^(?:DB|DATABASE|POSTGRES(?:QL)?|PG|MYSQL|MARIADB|MONGO(?:DB)?|REDIS|MEMCACHED|SMTP|"
                               r"MAIL|EMAIL|LDAP|RABBITMQ|AMQP|KAFKA|NATS|ELASTIC(?:SEARCH)?|OPENSEARCH|S3|MINIO_CLIENT)_",
                               re.IGNORECASE)


# TLS set up on the server itself (--ssl-certfile, --tls-cert, an SSL_CERT env).
TLS = re.compile(r"ssl|tls|certificate|cert[-_]?file|https", re.IGNORECASE)


def _key_in_clear_text(b: Backend, path: str) -> Iterator[Hit]:
    """A NodePort in front of a server that asks its callers for an API key over plain HTTP: the key and the
    requests reach every node's port in clear text, where anyone on the path can take the key and call the server
    with it. (A load balancer may terminate TLS by means these files do not show; a node port is the server's own
    socket.)"""
    for o, _pod_path, pod in b.pods:
        for _f, i, c in containers(pod):
            names = [n for n in _env_names(c) if "API_KEY" in n.upper() and not OUTBOUND_CREDENTIAL.match(n)]
            text = argv(c)
            if not (names or API_KEY_FLAG.search(text)) or TLS.search(f"{text} {' '.join(_env_names(c))}"):
                continue
            key = names[0] if names else "--api-key"
            yield Hit(path, f"Service {b.name} (NodePort) opens {o.kind} {o.name} (container {c.get('name', i)}) "
                      f"on every node's port over plain HTTP: its callers send the API key ({key}) in clear text, "
                      "and the server sets up no TLS (assumed: nothing in front of the node ports terminates TLS)",
                      obj=b.obj, severity=Severity.WARNING)
            return


def _unnamed_server(b: Backend, path: str) -> Iterator[Hit]:
    """A public Service in front of pods whose server no rule above can name: nothing in the files shows who may
    call it. Accelerator pods are named as such (a model server started through a wrapper, most likely)."""
    pods = [(o, pod) for o, _pod_path, pod in b.pods]
    accel = [o for o, pod in pods if any(accelerators_asked(c) for _f, _i, c in containers(pod))]
    o = (accel or [pods[0][0]])[0]
    what = f"{o.kind} {o.name}" + (", an accelerator server," if accel else "")
    yield Hit(path, f"Service {b.name} ({b.type}) gives {what} an address outside the cluster, and nothing in these "
              "files authenticates its callers (no API key, no internal load balancer, no source ranges)",
              obj=b.obj, severity=Severity.WARNING)


# A Service whose pods are applied from another file: what it fronts is known only from its own name, selector
# and ports. Each server by the words that name it and the ports it listens on by default.
NAMED_SERVERS = (
    (("triton",), {8000, 8001}, "the Triton inference API"),
    (("tfserve", "tfserving", "tensorflow-serving", "tf-serving"), {8500, 8501}, "the TensorFlow Serving API"),
    (("vllm",), {8000}, "the vLLM OpenAI-compatible API"),
    (("tgi", "text-generation-inference"), {80, 3000, 8080}, "the Text Generation Inference API"),
    (("sglang",), {30000}, "the SGLang API"),
    (("gradio",), {7860}, "a Gradio app"),
    (("litellm",), {4000}, "the LiteLLM proxy (with no master_key it serves any caller on its provider keys)"),
    (("ray-head", "head-svc"), set(RAY_HEAD_PORTS), "the Ray head"),
)


def _named_server(b: Backend) -> str | None:
    meta = b.obj.obj.get("metadata") if isinstance(b.obj.obj.get("metadata"), dict) else {}
    spec = b.obj.obj.get("spec") if isinstance(b.obj.obj.get("spec"), dict) else {}
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    words = " ".join(str(x) for x in (meta.get("name"), *selector.values())).lower()
    targets = {int(t) for p in b.ports for t in (p.port, p.target) if str(t).isdigit()}
    for names, ports, what in NAMED_SERVERS:
        if any(re.search(rf"(^|[^a-z]){re.escape(n)}([^a-z]|$)", words) for n in names) and targets & ports:
            return what
    return None


# Servers that authenticate no caller by default, by the port they listen on unless told otherwise: what a public
# Service whose pods are applied from another file most likely fronts when it targets that port.
DEFAULT_PORTS = {8000: "vLLM's and Triton's HTTP APIs", 8001: "Triton's gRPC API",
                 8500: "TensorFlow Serving's gRPC API", 8501: "TensorFlow Serving's REST API or a Streamlit app",
                 30000: "SGLang's API", 23333: "LMDeploy's API", 11434: "Ollama's API", 7860: "a Gradio app",
                 8888: "a Jupyter server", 5555: "Celery Flower's dashboard", **RAY_HEAD_PORTS}


def _default_port(b: Backend) -> tuple[int | None, str]:
    for p in b.ports:
        for t in (p.target, p.port):
            if str(t).isdigit() and int(t) in DEFAULT_PORTS:
                return int(t), DEFAULT_PORTS[int(t)]
    return None, ""


def _node(node, dotted: str):
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else (
            node[int(part)] if isinstance(node, list) and part.isdigit() and int(part) < len(node) else None)
    return node


def _dedup(items) -> list:
    return list(dict.fromkeys(items))


def _route_backends(o) -> Iterator[tuple[str, str, object]]:
    """(path, service name, port number or name) for each backend of an Ingress or Gateway API route."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    if o.kind == "Ingress":
        default = (spec.get("defaultBackend") or {}).get("service") if isinstance(spec.get("defaultBackend"),
                                                                                   dict) else None
        if isinstance(default, dict):
            port = default.get("port") or {}
            yield "spec.defaultBackend", str(default.get("name")), port.get("number", port.get("name"))
        for i, rule in enumerate(spec.get("rules") or []):
            paths = ((rule or {}).get("http") or {}).get("paths") if isinstance(rule, dict) else None
            for j, item in enumerate(paths or []):
                svc = ((item or {}).get("backend") or {}).get("service") if isinstance(item, dict) else None
                if isinstance(svc, dict):
                    port = svc.get("port") or {}
                    yield (f"spec.rules.{i}.http.paths.{j}.backend.service", str(svc.get("name")),
                           port.get("number", port.get("name")))
    elif o.kind == "Route":  # OpenShift's: `to` and `alternateBackends` name Services, `port.targetPort` the port
        port = (spec.get("port") or {}).get("targetPort") if isinstance(spec.get("port"), dict) else None
        targets = [("spec.to", spec.get("to"))] + [(f"spec.alternateBackends.{i}", b)
                                                   for i, b in enumerate(spec.get("alternateBackends") or [])]
        for path, target in targets:
            if isinstance(target, dict) and target.get("kind", "Service") == "Service" and target.get("name"):
                yield path, str(target["name"]), port
    elif o.kind == "IngressRoute":  # Traefik's: each route's `services` name Services (kind Service by default)
        for i, route in enumerate(spec.get("routes") or []):
            for j, svc in enumerate((route or {}).get("services") or [] if isinstance(route, dict) else []):
                if isinstance(svc, dict) and svc.get("kind", "Service") == "Service" and svc.get("name"):
                    yield f"spec.routes.{i}.services.{j}", str(svc["name"]), svc.get("port")
    else:
        for i, rule in enumerate(spec.get("rules") or []):
            for j, ref in enumerate((rule or {}).get("backendRefs") or [] if isinstance(rule, dict) else []):
                if isinstance(ref, dict) and ref.get("kind", "Service") == "Service" and ref.get("group", "") == "":
                    yield f"spec.rules.{i}.backendRefs.{j}", str(ref.get("name")), ref.get("port")


def _route_exposure(ctx, all_backends: list[Backend]) -> Iterator[Hit]:
    routes = [o for o in ctx.of_kind(*ROUTE_GROUPS)
              if str(o.obj.get("apiVersion", "")).startswith(ROUTE_GROUPS[o.kind])]
    for o in routes:
        meta = o.obj.get("metadata") if isinstance(o.obj.get("metadata"), dict) else {}
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        if any(k in annotations for k in AUTH_ANNOTATIONS) or _route_middlewares(o):
            continue
        limited = o.kind not in PUBLIC_ROUTES or _internal(annotations) or any(k in annotations for k in ALLOW_LIST)
        ns = namespace_of(o, ctx.namespace)
        clear = "" if _has_tls(o) else ", in the clear (no tls),"
        routed: set[tuple[str, str]] = set()  # several paths to one Service port are one exposure, told once
        for path, name, port in _route_backends(o):
            if (name, str(port)) in routed:
                continue
            routed.add((name, str(port)))
            found = [b for b in all_backends if b.name == name and b.namespace == ns]
            if not found:
                unknown = _unknown_ray_head(name, port)
                if unknown:
                    yield Hit(path, f"{o.kind} {o.name} routes to {unknown} of the Ray head Service {name} with no "
                              "authentication", obj=o, severity=_severity(limited))
                elif not limited and str(port).isdigit() and int(port) in DEFAULT_PORTS:
                    yield Hit(path, f"{o.kind} {o.name} routes{clear} to port {port} of Service {name}, which these "
                              f"files do not declare; {port} is the default port of {DEFAULT_PORTS[int(port)]}, which "
                              "has no authentication of its own (assumed: the Service fronts that)", obj=o,
                              severity=Severity.WARNING)
                continue
            for b in found:
                ports = [p for p in b.ports if port is None or str(p.port) == str(port) or p.name == port]
                apis = _dedup(_exposed_apis(ctx, b, ports))
                for where, what, seen, auth in apis:
                    yield Hit(path, f"{o.kind} {o.name} routes to {what} of {where} through Service {name} {auth}",
                              obj=o, severity=_severity(limited or not seen))
                if not apis and not limited and b.pods and not any(
                        _named_or_keyed(ctx, t, pp, pod) for t, pp, pod in b.pods):
                    target = b.pods[0][0]
                    yield Hit(path, f"{o.kind} {o.name} routes{clear} to {target.kind} {target.name} through Service "
                              f"{name}, and nothing in these files authenticates its callers", obj=o,
                              severity=Severity.WARNING)
                elif not apis and not limited and clear:
                    yield from _credential_in_clear_text(o, b, path)


# An env credential whose name says the server asks it of its callers: a bare key or token, a login's password (a
# root or admin one, a notebook's); `VENDOR_API_KEY` names a key the app may present to that vendor instead.
CALLERS_CREDENTIAL = re.compile(r"^(?:API_KEYS?|API_TOKEN|AUTH_TOKEN|ACCESS_TOKEN|PASSWORD)$"
                                r"|^(?:VLLM|JUPYTER|NOTEBOOK|SERVER|APP)_(?:API_KEY|TOKEN)$"
                                r"|(?:^|_)(?:ROOT|ADMIN|LOGIN)_PASSWORD$", re.IGNORECASE)


def _credential_in_clear_text(route, b: Backend, path: str) -> Iterator[Hit]:
    """A public route without TLS to a server that asks its callers for a credential (an API key, a token, its
    own login password from a Secret; a Jupyter server, which takes a token unless it is switched off): callers
    send it over plain HTTP, where anyone on the path can take it."""
    for o, _pod_path, pod in b.pods:
        for _f, _i, c in containers(pod):
            env = _env_names(c)
            names = [n for n, value in env.items() if _own_credential(n, value) and CALLERS_CREDENTIAL.search(n)]
            asks = names[0] if names else "--api-key" if API_KEY_FLAG.search(argv(c)) else (
                "the Jupyter token" if is_notebook(c) or "jupyter" in str(c.get("image", "")).lower() else None)
            if asks is None or TLS.search(f"{argv(c)} {' '.join(env)}"):
                continue
            yield Hit(path, f"{route.kind} {route.name} routes, in the clear (no tls), to {o.kind} {o.name} through "
                      f"Service {b.name}: its callers send the credential it asks for ({asks}) over plain HTTP "
                      "(assumed: nothing in front of the ingress terminates TLS)", obj=route,
                      severity=Severity.WARNING, remediation=f"serve {route.kind} {route.name} over TLS (`tls:` with "
                      "a certificate for its host), or keep the Service ClusterIP")
            return


def _route_middlewares(o) -> bool:
    """A Traefik IngressRoute whose routes pass through middlewares: one may authenticate (basicAuth,
    forwardAuth), which the route does not show."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    return o.kind == "IngressRoute" and any(isinstance(r, dict) and r.get("middlewares")
                                            for r in spec.get("routes") or [])


def _has_tls(o) -> bool:
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    if o.kind == "Route":  # edge TLS that still admits plain HTTP (`insecureEdgeTerminationPolicy: Allow`) is not
        tls = spec.get("tls") if isinstance(spec.get("tls"), dict) else None
        return bool(tls) and tls.get("insecureEdgeTerminationPolicy") != "Allow"
    # a Gateway API route's TLS is its Gateway's listener
    return bool(spec.get("tls")) or o.kind not in ("Ingress", "IngressRoute")


def _unknown_ray_head(name: str, port) -> str | None:
    """A KubeRay head Service of a cluster outside the set, on the dashboard or client port."""
    if not name.endswith("-head-svc"):
        return None
    number = RAY_PORT_NAMES.get(str(port)) or (int(port) if str(port).isdigit() else None)
    return RAY_HEAD_PORTS.get(number) if number else None


def _kuberay_ingress(ctx) -> Iterator[Hit]:
    """`headGroupSpec.enableIngress: true`: KubeRay creates an Ingress to the head's dashboard port."""
    for o, pod_path, _pod in ctx.pod_templates():
        if not pod_path.endswith("headGroupSpec.template.spec"):
            continue
        head_path = pod_path.removesuffix(".template.spec")
        head = _node(o.obj, head_path)
        if isinstance(head, dict) and head.get("enableIngress") is True and not _ray_token_auth(o, pod_path):
            yield Hit(f"{head_path}.enableIngress", f"{o.kind} {o.name}: enableIngress makes KubeRay route an "
                      "Ingress to the Ray dashboard and job API (8265), with no authentication", obj=o)


PLAIN = ("HTTP", "TCP", "UDP")


def _gateway_listeners(ctx) -> Iterator[Hit]:
    """A Gateway API Gateway whose every listener is plain (HTTP, TCP): whatever routes attach to it (model
    traffic, API keys in headers) crosses it unencrypted, and nothing here shows authentication in front."""
    for o in ctx.of_kind("Gateway"):
        if not str(o.obj.get("apiVersion", "")).startswith("gateway.networking.k8s.io/"):
            continue
        spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
        listeners = [x for x in spec.get("listeners") or [] if isinstance(x, dict)]
        if not listeners or INTERNAL.search(str(spec.get("gatewayClassName", ""))) or any(
                str(x.get("protocol", "")).upper() not in PLAIN for x in listeners):
            continue
        shown = ", ".join(f"{x.get('protocol')}:{x.get('port')}" for x in listeners)
        yield Hit("spec.listeners", f"Gateway {o.name} listens only in the clear ({shown}): no HTTPS or TLS "
                  "listener, so the routes attached to it are served unencrypted and, as far as these files show, "
                  "unauthenticated (assumed: its class gives it an address outside the cluster)", obj=o,
                  severity=Severity.WARNING)


KNATIVE_VISIBILITY = ("networking.knative.dev/visibility", "serving.knative.dev/visibility")


def _knative_services(ctx) -> Iterator[Hit]:
    """A Knative Service is published on the cluster's external domain through Knative's ingress unless labelled
    `cluster-local` (Knative Serving's default visibility); its container's server answers there."""
    for o, pod_path, pod in ctx.pod_templates():
        if o.kind != "Service" or not str(o.obj.get("apiVersion", "")).startswith("serving.knative.dev/"):
            continue
        labels = (o.obj.get("metadata") or {}).get("labels")
        if isinstance(labels, dict) and any(labels.get(k) == "cluster-local" for k in KNATIVE_VISIBILITY):
            continue
        for field, i, c in containers(pod):
            api = unauthenticated_api(c, ray_head=False, ray_token_auth=False)
            if api:
                yield Hit(f"{pod_path}.{field}.{i}", f"Knative Service {o.name} publishes {api.what} of container "
                          f"{c.get('name', i)} through Knative's ingress {api.auth}: it has no "
                          "networking.knative.dev/visibility: cluster-local label (assumed: the cluster's Knative "
                          "domain is reachable from outside, Knative's default)", obj=o, severity=Severity.WARNING)


def _operator_services(ctx, all_backends: list[Backend]) -> Iterator[Hit]:
    """`serviceType: LoadBalancer` (or NodePort) anywhere in a custom resource: the operator creates that Service
    for what the resource runs (KubeRay's head Service is followed as a backend above)."""
    covered = {(id(b.obj), f"{b.path}.serviceType") for b in all_backends if b.obj.kind != "Service"}
    for o in ctx.objects:
        if "." not in str(o.obj.get("apiVersion", "")).split("/")[0] or o.kind in ("Service", "Gateway"):
            continue
        for path, value in ctx.strings_under(o, "spec"):
            if path.endswith(".serviceType") and (id(o), path) not in covered and value in ("LoadBalancer",
                                                                                              "NodePort"):
                yield Hit(path, f"{o.kind} {o.name}: serviceType {value} makes its operator expose what it runs "
                          "outside the cluster, and nothing in these files authenticates the callers",
                          obj=o, severity=Severity.WARNING)


# Host ports a node's web front door takes (an ingress controller bound to the node's 80 and 443): the routes it
# serves are judged as routes, not as the proxy's own API.
FRONT_DOOR_PORTS = frozenset({80, 443})


def _node_ports_of_pods(ctx) -> Iterator[Hit]:
    """A container port bound on its node's address (`hostPort`, or any port under `hostNetwork`): reachable by
    whatever reaches the node, with no Service in between."""
    for o, pod_path, pod in ctx.pod_templates():
        host_network = pod.get("hostNetwork") is True
        head, token = _is_ray_head(ctx, o, pod_path), _ray_token_auth(o, pod_path)
        for field, i, c in containers(pod):
            bound = {p["containerPort"]: p.get("hostPort", p["containerPort"]) for p in c.get("ports") or []
                     if isinstance(p, dict) and isinstance(p.get("containerPort"), int)
                     and (host_network or isinstance(p.get("hostPort"), int))}
            api = unauthenticated_api(_as_run(ctx, c), head and c is _first(pod), token)
            api = None if api is not None and _follower(o, pod_path, c, api) else api
            how = "hostNetwork" if host_network else "hostPort"
            base = f"{pod_path}.{field}.{i}"
            if api is not None:
                ports = sorted(api.ports & set(bound)) or (sorted(api.ports) if host_network else [])
                if ports:
                    yield Hit(f"{base}.ports" if bound else f"{pod_path}.hostNetwork",
                              f"{o.kind} {o.name}: container {c.get('name', i)} binds {api.what} on its node's "
                              f"address ({how}, port {ports[0]}) {api.auth}: whatever reaches the node "
                              "reaches it (assumed: the node's address is reachable beyond the cluster)",
                              obj=o, severity=Severity.WARNING)
                continue
            published = sorted(h for h in bound.values() if h not in FRONT_DOOR_PORTS)
            if host_network or not published or o.kind == "DaemonSet" or _named_or_keyed(ctx, o, pod_path, pod):
                continue  # node agents (exporters, log shippers) and servers judged above
            yield Hit(f"{base}.ports", f"{o.kind} {o.name}: container {c.get('name', i)} publishes port "
                      f"{published[0]} on its node's address (hostPort), and nothing in these files authenticates "
                      "its callers (no API key or token): whatever reaches the node reaches it (assumed: the node's "
                      "address is reachable beyond the cluster)", obj=o, severity=Severity.WARNING)


def check(ctx) -> Iterator[Hit]:
    all_backends = backends(ctx)
    yield from _service_exposure(ctx, all_backends)
    yield from _route_exposure(ctx, all_backends)
    yield from _kuberay_ingress(ctx)
    yield from _gateway_listeners(ctx)
    yield from _operator_services(ctx, all_backends)
    yield from _knative_services(ctx)
    yield from _node_ports_of_pods(ctx)
