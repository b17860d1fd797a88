"""GRPO101 namespace-mismatch."""

from __future__ import annotations

import re
from collections.abc import Iterator
from difflib import get_close_matches

from ..controllers import controller_services
from ..finding import Hit, Severity
from ._objects import claim_volumes, containers
from ._podsecurity import namespace_of
from ._serving import container_ports
from .release_namespace import EXPECTED

CODE = "GRPO101"
NAME = "namespace-mismatch"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "An in-cluster URL or PVC reference points outside the release namespace or at nothing the release has."
DOC = """## What it does
Finds every in-cluster DNS name (`<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`, and `<svc>.<ns>` as the host
of a URL when `<svc>` is a Service the release defines) in the values
and in the rendered objects (env values, arguments, ConfigMap data), and every `claimName`. Each name must be in
the release namespace and name a Service the release renders (or the KubeRay head Service); each claim must be
the PVC declared in `global.storage.claimName`. In plain manifests (not rendered from values), a name in another
namespace is reported only when the manifests define a Service of that name themselves — the predecessor's bug —
since a shared service (monitoring, another team's gateway) legitimately lives elsewhere (an ExternalName
Service's own `externalName`, an alias of a Service elsewhere, is never judged), and a name in the
namespace that no file defines is a warning when several files are linted together, naming the assumption that no
other file applies that Service (a homelab's apps each apply their own, and call one another by name); a file
linted alone may name a Service another file applies, so there it is reported only where the file declares a
Service of a near name (`sandbox-fusoin` beside `sandbox-fusion`: a misspelling), as a warning. When nothing
states the namespace the files go into (no `--namespace`, and the Service itself names none), a name in another
namespace is a warning naming that assumption: the files work if applied there (`kubectl apply -n`);
`kubernetes.default.svc` is the API server and is never reported. Files linted together that declare
PersistentVolumeClaims are the set that makes its claims: a pod's `claimName` none of them declares in the pod's
namespace is a warning naming the assumption that nothing outside them creates it (a set that declares no claim is
not judged); so are ConfigMaps a pod cannot start without (a volume, a projected source, `envFrom`, a
`configMapKeyRef`, none `optional`), where the files declare ConfigMaps (`kube-root-ca.crt`, which Kubernetes puts
in every namespace, excepted). A URL whose host is one label
(`http://llm-inference:8000/v1`, any network scheme) names a Service of the pod's own namespace: read in a
container's env values and arguments, in plain manifests that define Services, a host none of them names (nor a
`hostAliases` name, nor localhost) is a warning when the files are linted together, naming the assumption that no
file outside them applies it; a file linted alone is judged only for a misspelling of one of its own Services.
ConfigMap keys are not read for it: they often configure a mode the set does not run (a mock backend, a disabled
exporter). A container's URL to `localhost` (or a loopback address) on the node port of a NodePort Service of the
set is an error when nothing in its pod declares or states that port: localhost is the pod's own network
namespace, not the node's (unless the pod runs on the host network); on a port of the default node-port range
(30000-32767) with no such Service in the files, a warning naming that assumption.

A shared service in another namespace is declared as a flow in `global.network.egress` (docs/security.md): a name
in namespace `N` is accepted when a flow from the pods that use it (`ray` for `global.job`, else the component
whose values hold it) goes to `namespace: N` (or `namespaceLabels` naming `kubernetes.io/metadata.name: N`). A
flow that reaches the namespace on other ports than the URL's is a warning: a NetworkPolicy matches the pod's
port, which is the URL's port unless the Service maps it to another.

## Why is this bad?
The predecessor hard-coded `sandbox-fusion.default.svc.cluster.local` while the sandbox was applied to whatever
namespace the kubectl context pointed at. Every reward call went to a name with no Service behind it, and the
preflight aborted the run against a URL that was never going to resolve.

## Example
```yaml
global:
  job:
    reward:
      kind: external
      url: http://reward.other-team.svc.cluster.local:8000/score
```
Use instead:
```yaml
global:
  components:
    rewardService: true
  job:
    reward:
      kind: service
```

Or, for a service another team runs in its namespace:
```yaml
global:
  network:
    egress:
      - name: shared-reward
        from: ray
        to: {namespace: other-team, podLabels: {app: reward}}
        ports: [{port: 8000}]
        why: the team's shared reward server
```

## Fix
Use the component this release deploys (its URL is built in the release namespace), an external URL that is
not an in-cluster name, or declare the flow to the other namespace in `global.network.egress`.
"""

DNS = re.compile(r"\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\b")


def check(ctx) -> Iterator[Hit]:
    services = {o.name for o in ctx.of_kind("Service")}
    services |= controller_services(ctx.objects)  # KubeRay head/serve, JobSet and LeaderWorkerSet Services
    from_values = set()
    flows = declared_flows(ctx)
    several = len({o.template for o in ctx.objects}) > 1  # files linted together: the set applied
    if ctx.has_values:
        for path, text in ctx.value_strings():
            if next(_names(text, services), None) is not None:
                from_values.add(text)  # judged here, at its values key, whatever the verdict
            for message, severity in _check_text(ctx, text, services, flows, _sources_of_key(path), several):
                yield Hit(path, message, severity=severity)
    node_ports = _node_ports(ctx) if not ctx.has_values else {}
    for o in ctx.objects:
        sources = _sources_of_object(o)
        aliases: set[str] | None = None  # read only where a one-label host is found
        for path, text in ctx.object_strings(o):
            if ".svc" not in text and "://" not in text:
                continue  # names no Service (_names)
            if not ctx.has_values and LOCALHOST.search(text) and CONTAINER_SETTING.search(path):
                yield from _localhost_node_port(ctx, o, path, text, node_ports)
            if any(v in text for v in from_values):
                continue  # already reported at the values key that carries it
            if not ctx.has_values and o.kind == "Service" and path == "spec.externalName":
                continue  # an ExternalName Service is the alias of a Service elsewhere: naming one is its purpose
            for message, severity in _check_text(ctx, text, services, flows, sources, several):
                yield Hit(path, f"{o.kind} {o.name}: {message}", obj=o, severity=severity)
            if not ctx.has_values and services and "://" in text and CONTAINER_SETTING.search(path):
                aliases = _host_aliases(ctx, o) if aliases is None else aliases
                for message in _bare_hosts(text, services, aliases, several):
                    yield Hit(path, f"{o.kind} {o.name}: {message}", obj=o, severity=Severity.WARNING)
    if not ctx.has_values and several:
        yield from _undeclared_claims(ctx)
        yield from _undeclared_config_maps(ctx)
    claim = ctx.get("global.storage.claimName")
    if claim:
        for o, pod_path, pod in ctx.pod_templates():
            for i, _, name in claim_volumes(pod):
                if name != claim:
                    yield Hit(f"{pod_path}.volumes.{i}.persistentVolumeClaim.claimName",
                              f"{o.kind} {o.name} mounts PVC {name!r}; the release declares {claim!r}", obj=o)


def _undeclared_claims(ctx) -> Iterator[Hit]:
    """Plain manifests linted together that declare PersistentVolumeClaims: a pod's claim that none of them
    declares in the pod's namespace keeps the pod Pending, unless something outside these files creates it (the
    assumption the warning names). A set that declares no claim leaves its claims to another step: not judged."""
    def claims(pod: dict) -> Iterator[tuple[str, str]]:
        return ((f"volumes.{i}.persistentVolumeClaim.claimName", name) for i, _, name in claim_volumes(pod))

    for o, pod_path, path, name, ns, declared in _undeclared(ctx, "PersistentVolumeClaim", claims):
        elsewhere = sorted(n for n, c in declared if c == name)
        why = (f"PVC {name!r} is declared in namespace {elsewhere[0]!r} and the pod runs in {ns!r}: a pod mounts "
               "only a claim of its own namespace" if elsewhere else
               f"no file declares PVC {name!r} (they declare {', '.join(sorted(c for _, c in declared))})")
        yield Hit(f"{pod_path}.{path}", f"{o.kind} {o.name}: {why}; the pod stays Pending until one exists (assumed: "
                  "nothing outside these files creates it)", obj=o, severity=Severity.WARNING)


def _undeclared(ctx, kind: str, refs) -> Iterator[tuple]:
    """Where the plain files linted together declare objects of `kind`, each reference a pod makes (`refs(pod)`:
    its path under the pod spec and the name) to one none of them declares in the pod's namespace, a templated name
    aside: (object, pod path, reference path, name, the pod's namespace, the declared (namespace, name) pairs)."""
    declared = {(namespace_of(c, ctx.namespace), c.name) for c in ctx.of_kind(kind)}
    if not declared:
        return
    for o, pod_path, pod in ctx.pod_templates():
        ns = namespace_of(o, ctx.namespace)
        for path, name in refs(pod):
            if (ns, name) not in declared and "$" not in name and "{" not in name:
                yield o, pod_path, path, name, ns, declared


# The ConfigMap Kubernetes publishes in every namespace (the cluster's CA bundle): no file declares it.
PUBLISHED_CONFIG_MAPS = frozenset({"kube-root-ca.crt"})


def _config_map_refs(pod: dict) -> Iterator[tuple[str, str]]:
    """(path under the pod spec, name) of each ConfigMap the pod cannot start without: a volume's or a projected
    volume's source, an `envFrom` or a `configMapKeyRef`, none marked `optional: true`."""
    for i, v in enumerate(pod.get("volumes") or []):
        if not isinstance(v, dict):
            continue
        cm = v.get("configMap")
        if isinstance(cm, dict) and cm.get("name") and not cm.get("optional"):
            yield f"volumes.{i}.configMap.name", str(cm["name"])
        sources = (v.get("projected") or {}).get("sources") if isinstance(v.get("projected"), dict) else None
        for j, src in enumerate(sources if isinstance(sources, list) else []):
            cm = src.get("configMap") if isinstance(src, dict) else None
            if isinstance(cm, dict) and cm.get("name") and not cm.get("optional"):
                yield f"volumes.{i}.projected.sources.{j}.configMap.name", str(cm["name"])
    for field, i, c in containers(pod):
        for j, e in enumerate(c.get("envFrom") or []):
            ref = e.get("configMapRef") if isinstance(e, dict) else None
            if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                yield f"{field}.{i}.envFrom.{j}.configMapRef.name", str(ref["name"])
        for j, e in enumerate(c.get("env") or []):
            ref = ((e.get("valueFrom") or {}).get("configMapKeyRef") if isinstance(e, dict)
                   and isinstance(e.get("valueFrom"), dict) else None)
            if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                yield f"{field}.{i}.env.{j}.valueFrom.configMapKeyRef.name", str(ref["name"])


def _undeclared_config_maps(ctx) -> Iterator[Hit]:
    """As for claims: plain manifests linted together that declare ConfigMaps are the set that makes them; a pod's
    ConfigMap that none of them declares in its namespace keeps the pod from starting (ContainerCreating, or
    CreateContainerConfigError for its env), unless something outside these files creates it (the assumption the
    warning names: `kubectl create configmap --from-file`, a kustomize generator). A set that declares no ConfigMap
    leaves them to another step: not judged."""
    for o, pod_path, path, name, ns, declared in _undeclared(ctx, "ConfigMap", _config_map_refs):
        if name in PUBLISHED_CONFIG_MAPS:
            continue
        names = ", ".join(sorted(c for _, c in declared))
        yield Hit(f"{pod_path}.{path}", f"{o.kind} {o.name}: no file declares ConfigMap {name!r} in namespace "
                  f"{ns!r} (they declare {names}); the pod does not start until one exists (assumed: nothing "
                  "outside these files creates it)", obj=o, severity=Severity.WARNING)


# `http://<svc>.<ns>:8080/…`: the short form resolves through the pod's DNS search list (`svc.cluster.local`). Only
# read in a URL whose host ends there, and only when <svc> is a Service of the set (else it is a public host).
SHORT = re.compile(r"://([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?=[:/?#\s\"']|$)")


def _names(text: str, services: set[str]):
    if ".svc" in text:  # DNS needs it, SHORT needs `://`: most strings hold neither and skip both scans
        yield from DNS.finditer(text)
    if "://" in text:
        yield from (m for m in SHORT.finditer(text) if m.group(1) in services)


# How alike a URL's Service name and a declared one must be (difflib's ratio) to read the first as a misspelling.
NEAR_NAME = 0.8

# `http://reward:8000/score`: a one-label host resolves only to a Service of the pod's own namespace (the DNS search
# list), or to a name the pod's hostAliases give. Read for network schemes only (an `s3://bucket` is no host), with
# any `user:password@` skipped: atomically, so a dotted host after it never lets the user name be read as the host.
BARE = re.compile(r"\b(https?|grpcs?|wss?|tcp|bolt|neo4j|redis|rediss|postgres|postgresql|mysql|mongodb|amqp|nats)"
                  r"://(?>(?:[^@/\s]*@)?)([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)(?=[:/?#\s\"';,)]|$)")
# Where a one-label host is what a container runs with: its literal env and its arguments. A ConfigMap's keys are
# often settings for a mode the set does not run (a mock backend, a disabled exporter): not read for them.
CONTAINER_SETTING = re.compile(r"\b(?:initC|c)ontainers\.\d+\.(?:env\.\d+\.value|args|command)\b")
UPSTREAM = re.compile(r"\bupstream\s+([-\w]+)\s*\{")  # nginx: `proxy_pass http://backend` names an upstream


def _bare_hosts(text: str, services: set[str], aliases: set[str], several: bool) -> Iterator[str]:
    """What is wrong with each one-label URL host of `text` (a container's env value or argument) in plain
    manifests that define Services: in files linted together, a host no Service of theirs is named; in one file, a
    host that misspells one of its own."""
    upstreams = set(UPSTREAM.findall(text)) if "upstream" in text else set()
    for m in BARE.finditer(text):
        scheme, host = m.group(1), m.group(2)
        if host in services or host in aliases or host in upstreams or host == "localhost":
            continue
        if several:
            yield (f"{scheme}://{host}: no Service {host!r} in these files (has: {', '.join(sorted(services))}); a "
                   "one-label host resolves only to a Service of the pod's own namespace (assumed: no file outside "
                   "these applies one)")
        else:
            near = get_close_matches(host, services, n=1, cutoff=NEAR_NAME)
            if near:
                yield (f"{scheme}://{host}: this file declares no Service named {host!r} but one named {near[0]!r}: "
                       f"a misspelling? (assumed: no other file applies a Service {host!r})")


def _host_aliases(ctx, o) -> set[str]:
    """The host names the object's pods get from `hostAliases` (/etc/hosts), in any of its pod templates."""
    found: set[str] = set()
    for _owner, _path, pod in ctx.pod_templates_of(o):
        aliases = pod.get("hostAliases")
        for alias in aliases if isinstance(aliases, list) else []:
            names = alias.get("hostnames") if isinstance(alias, dict) else None
            if isinstance(names, list):
                found.update(h for h in names if isinstance(h, str))
    return found


def _check_text(ctx, text: str, services: set[str], flows: list[dict], sources: set[str] | None,
                several: bool) -> Iterator[tuple[str, Severity | None]]:
    for m in _names(text, services):
        svc, ns = m.group(1), m.group(3)
        if (svc, ns) == ("kubernetes", "default"):
            continue  # the API server, reachable from every namespace
        if ns != ctx.namespace and not ctx.has_values and svc not in services:
            continue  # a shared service in its own namespace (monitoring, a team's gateway): not ours to judge
        if ns != ctx.namespace and not ctx.has_values and _placed_in(ctx, svc, ns):
            continue  # the set's own Service, placed in the namespace the URL names
        name = m.group(0).removeprefix("://")
        if ns != ctx.namespace:
            reaching = [f for f in flows if _reaches(f, ns) and (sources is None or f.get("from") in sources)]
            port = _url_port(text, m)
            if reaching and (port is None or any(_opens(f, port) for f in reaching)):
                continue  # a declared flow admits it
            if reaching:
                opened = sorted({p.get("port") for f in reaching for p in f.get("ports") or []})
                yield (f"{name} is in namespace {ns!r}; the declared flow {reaching[0].get('name')!r} reaches it on "
                       f"port(s) {', '.join(map(str, opened))}, the URL uses {port}: the NetworkPolicy drops it "
                       f"unless the Service maps port {port} to one of those", Severity.WARNING)
                continue
            if _namespace_unstated(ctx, svc):
                yield (f"{name} is in namespace {ns!r}; nothing states the namespace these files go into (no "
                       f"--namespace, and Service {svc} names none), so it is assumed {ctx.namespace!r}: the URL "
                       f"resolves only if they are applied in {ns!r} (`kubectl apply -n {ns}`)", Severity.WARNING)
                continue
            yield (f"{name} is in namespace {ns!r}, the release is in {ctx.namespace!r}; a Service of this release "
                   f"would resolve as {svc}.{ctx.namespace}.svc.cluster.local, and no global.network.egress flow "
                   f"reaches namespace {ns!r} (declare one for a shared service: docs/security.md)", None)
        elif services and svc not in services and ctx.has_values:
            yield (f"{m.group(0)}: the release renders no Service named {svc!r} "
                   f"(has: {', '.join(sorted(services))})", None)
        elif services and svc not in services and several:  # manifests: another file may apply that Service
            yield (f"{m.group(0)}: these files declare no Service named {svc!r} (has: {', '.join(sorted(services))}) "
                   "(assumed: no file outside these applies one)", Severity.WARNING)
        elif services and svc not in services:  # one manifest file: the Service may be applied from another file,
            near = get_close_matches(svc, services, n=1, cutoff=NEAR_NAME)  # unless the file names it misspelt
            if near:
                yield (f"{m.group(0)}: this file declares no Service named {svc!r} but one named {near[0]!r}: a "
                       f"misspelling? (assumed: no other file applies a Service {svc!r})", Severity.WARNING)


def _namespace_unstated(ctx, svc: str) -> bool:
    """Plain manifests with no --namespace whose Services named `svc` state no namespace: they land wherever
    `kubectl apply` puts them, so which namespace a URL must name is an assumption."""
    if ctx.has_values or ctx.extra.get(EXPECTED):
        return False
    named = ctx.derived("services-by-name", lambda: _by_name(ctx.of_kind("Service"))).get(svc, ())
    return bool(named) and not any((o.obj.get("metadata") or {}).get("namespace") for o in named)


def _placed_in(ctx, svc: str, ns: str) -> bool:
    """Plain manifests hold a Service `svc` whose own metadata places it in namespace `ns`."""
    named = ctx.derived("services-by-name", lambda: _by_name(ctx.of_kind("Service"))).get(svc, ())
    return any((o.obj.get("metadata") or {}).get("namespace") == ns for o in named)


def _by_name(objects: list) -> dict[str, list]:
    index: dict[str, list] = {}
    for o in objects:
        index.setdefault(o.name, []).append(o)
    return index


def declared_flows(ctx) -> list[dict]:
    """global.network.egress of a values release (plain manifests declare none)."""
    flows = ctx.get("global.network.egress") if ctx.has_values else None
    return [f for f in flows or [] if isinstance(f, dict)]


def _reaches(flow: dict, namespace: str) -> bool:
    to = flow.get("to") if isinstance(flow.get("to"), dict) else {}
    named = to.get("namespace") or (to.get("namespaceLabels") or {}).get("kubernetes.io/metadata.name")
    return named == namespace


def _opens(flow: dict, port: int) -> bool:
    return any(isinstance(p, dict) and p.get("port") == port for p in flow.get("ports") or [])


_PORT = re.compile(r":([0-9]{1,5})(?![0-9])")
_SCHEME = re.compile(r"([a-z][a-z0-9+.-]*)://$")
_SCHEME_PORTS = {"http": 80, "https": 443}


def _url_port(text: str, m: re.Match) -> int | None:
    """The port a URL's host is reached on: written after the host, else its scheme's; None when not a URL."""
    after = _PORT.match(text, m.end())
    if after:
        return int(after.group(1))
    before = text[:m.start()] + ("://" if m.group(0).startswith("://") else "")
    scheme = _SCHEME.search(before)
    return _SCHEME_PORTS.get(scheme.group(1)) if scheme else None


# The pods that open a connection a values key configures: a flow from other pods does not admit it.
_SOURCE_BY_SECTION = {"global": "ray", "raycluster": "ray", "reward-service": "reward-service",
                      "fsx-utils": "fsx-utils", "vllm": "vllm", "lm-eval": "lm-eval"}


def _sources_of_key(path: str) -> set[str] | None:
    if path.startswith("global.") and not path.startswith("global.job."):
        return None
    source = _SOURCE_BY_SECTION.get(path.split(".", 1)[0])
    return {source} if source else None


def _sources_of_object(o) -> set[str] | None:
    if o.kind in ("RayCluster", "RayJob", "RayService"):
        return {"ray"}
    component = ((o.obj.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component")
    return {component} if component else None


# A URL to the pod itself: `localhost` and the loopback addresses.
NODE_PORT_RANGE = range(30000, 32768)  # kube-apiserver --service-node-port-range default
LOCALHOST = re.compile(r"://(?:localhost|127\.0\.0\.1|\[::1\]):(\d+)")


def _node_ports(ctx) -> dict[int, str]:
    """nodePort -> the Service of the set that opens it on every node."""
    out = {}
    for svc in ctx.of_kind("Service"):
        for p in (svc.obj.get("spec") or {}).get("ports") or []:
            if isinstance(p, dict) and isinstance(p.get("nodePort"), int):
                out[p["nodePort"]] = svc.name
    return out


def _localhost_node_port(ctx, o, path: str, text: str, node_ports: dict[int, str]) -> Iterator[Hit]:
    """A container's URL to localhost on a port a NodePort Service of the set opens on the nodes, while nothing in
    the pod listens there: localhost is the pod's own network namespace (the node's only under hostNetwork)."""
    for pod in (pod for _t, pp, pod in ctx.pod_templates_of(o) if path.startswith(pp + ".")):
        if pod.get("hostNetwork") is True:
            return
        for m in LOCALHOST.finditer(text):
            port = int(m.group(1))
            if (port not in node_ports and port not in NODE_PORT_RANGE) or port in _pod_ports(pod):
                continue
            if port in node_ports:
                yield Hit(path, f"{o.kind} {o.name}: {m.group(0)} is the pod itself, but port {port} is the node port "
                          f"of Service {node_ports[port]}, which nothing in the pod listens on: the connection is "
                          "refused", obj=o, remediation=f"name the Service (http://{node_ports[port]}:<its port>)")
            else:
                yield Hit(path, f"{o.kind} {o.name}: {m.group(0)} is the pod itself, and nothing in it listens on "
                          f"port {port}, a port of Kubernetes' default node-port range (assumed: a NodePort Service "
                          "applied elsewhere opens it on the nodes, which localhost does not reach)", obj=o,
                          severity=Severity.WARNING, remediation="name the Service by its cluster DNS name and port")
        return


def _pod_ports(pod: dict) -> set[int]:
    """The ports the pod's containers declare or state with their own --port flags."""
    return {port for _field, _i, c in containers(pod) for port in container_ports(c)}
