"""GRPO851 unrendered-placeholder."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...apivalidation.podspecs import node_at
from ..finding import Hit, Severity
from ._image_files import is_image_file

CODE = "GRPO851"
NAME = "unrendered-placeholder"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = "A manifest still holds a template placeholder (`${NAMESPACE}`, `{{ .Values.x }}`) that nothing expands."
DOC = """## What it does
In manifest mode, finds template syntax that was meant to be rendered before `kubectl apply`:

- Helm/Go template actions naming Helm objects or functions (`{{ .Values.x }}`, `{{ .Release.Namespace }}`,
  `{{ include "x" . }}`), anywhere;
- envsubst placeholders (`${NAMESPACE}`, `$NAMESPACE`) in fields nothing expands: names, namespaces, labels,
  images, env values, exec-form `command`/`args`, volumes, selectors. Kubernetes expands only `$(VAR)`, and only
  in `command`, `args` and `env[].value`; a `$(VAR)` anywhere else is reported too.

- a stand-in left for the reader to replace (`<YOUR_REGISTRY>/api:1.0`, `volumeHandle: <FSS_OCID>:<IP>:/export`,
  `claimName: <your-claim>`): an upper-case word or one starting with `your` in angle brackets, in a field the
  kubelet, a controller or a CSI driver takes literally (an image, a metadata name or namespace, a claim, Secret,
  ConfigMap, service-account or storage-class name, a volume source's handle, server or path, an Ingress host).
  Env values are left to GRPO201 (a placeholder credential) and scripts to the shell.

- the marks of a variable envsubst expanded to nothing (it was unset, and envsubst has no error for that): an
  image reference with an empty part (`/rl/trainer:1.2.3`, `registry//trainer`, `trainer:`), a URL host with an
  empty label (`http://scorer..svc.cluster.local`, `http://:8080`). An image file on the node
  (`/images/trainer_v1.2.sif`, which Apptainer and Slurm virtual kubelets run) is a path, not such a reference.

Not reported: shell scripts run by `sh -c` (the shell expands them; in pod templates and in any other
`command`/`args` pair, such as KubeRay's `autoscalerOptions`), KubeRay `rayStartParams` values and the
Ray container's `command`/`args` (KubeRay joins them into the `/bin/bash -lc` line that runs `ray start`, so
`$REDIS_PASSWORD` or `$HOME` there is the container's env var; not with the `ray.io/overwrite-container-cmd`
annotation, nor when the command runs `ray start` itself), ConfigMap and Secret data (files a program may
template at start-up), annotations (other tools' templates), an External Secrets resource's `template` (its own
Go templates, `{{ .password | b64enc }}`), and a step's script: a Tekton step's `script` (run as a file by its
shebang's interpreter, `/bin/sh` without one) and the `source` of an Argo Workflow `script` template (run by the
`command` beside it): a shell expands `$NVIDIA_VISIBLE_DEVICES` there.

## Why is this bad?
An envsubst template applied without envsubst creates objects named `${NAMESPACE}`-something, or fails on
`metadata.namespace: ${NAMESPACE}`; in an env value the container receives the literal text `${REWARD_URL}` and
fails at the first request, far from the cause.

## Example
```yaml
env:
  - name: SANDBOX_URL
    value: http://sandbox.${NAMESPACE}.svc.cluster.local:8080
```
Use instead:
```yaml
env:
  - name: SANDBOX_URL
    value: http://sandbox.verl.svc.cluster.local:8080
```

## Fix
Render the manifest first (`envsubst < x.yaml`, `helm template`) and lint the output; to pass a pod's own
values, use `$(VAR)` in `command`/`args`/`env` or the downward API.
"""

HELM = re.compile(r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|(?:include|template|"
                  r"toYaml|tpl|required|default|quote|printf|lookup)\b)[^}]*\}\}")
ENVSUBST = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:]?[-=?+][^}]*)?\}|\$[A-Z_][A-Z0-9_]*\b")
KUBE_EXPANSION = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
DATA_KINDS = ("ConfigMap", "Secret")
# External Secrets Operator's resources: their `spec.target.template` is rendered by the operator's own Go templates.
EXTERNAL_SECRET_KINDS = ("ExternalSecret", "ClusterExternalSecret", "PushSecret")
# An image reference whose registry, repository or tag was an unset variable: `/x`, `a//b`, `a:`, `a@`, `:tag`.
EMPTY_IMAGE_PART = re.compile(r"^[/:@]|//|[:@]$")
# (file:/// has an empty host by design: only network schemes are read.) The host follows the user-info, if any
# (`redis://:PASSWORD@redis:6379` has a password and no user name, and its host is `redis`).
EMPTY_URL_HOST = re.compile(r"\b(?:https?|grpcs?|wss?|redis|s3)://(?:(?![^/\s]*@)(?:[:/.]|[^/\s]*\.\.)"
                            r"|[^/\s@]*@(?:[:/.]|[^/\s@]*\.\.))")


# A stand-in a walkthrough asks the reader to replace: `<YOUR_REGISTRY>`, `<FSS_OCID>`, `<your-bucket>`.
STAND_IN = re.compile(r"<(?:[A-Z][A-Z0-9_]{2,}|[Yy][Oo][Uu][Rr][-_ ][^<>]{1,60})>")
# Fields taken literally by the kubelet, a controller or a CSI driver (the last key of the path).
LITERAL_FIELDS = frozenset({"image", "volumeHandle", "server", "claimName", "secretName", "serviceAccountName",
                            "storageClassName", "host", "namespace"})


def _stand_in_field(path: str) -> bool:
    parts = path.split(".")
    if parts[-1] in LITERAL_FIELDS:
        return True
    if parts[-1] == "name" and len(parts) == 2 and parts[0] == "metadata":
        return True
    # a volume source's path (nfs, hostPath) or its CSI attributes, in a pod or a PersistentVolume
    return parts[-1] == "path" and ("volumes" in parts or parts[:2] in (["spec", "nfs"], ["spec", "hostPath"])) \
        or "volumeAttributes" in parts


def check(ctx) -> Iterator[Hit]:
    if ctx.has_values:  # our own chart renders every template; values mode lints the rendered output
        return
    from ..shell import scripts

    shell = {(id(s.obj), s.path) for s in scripts(ctx)}
    for o in ctx.objects:
        for path, text in ctx.object_strings(o):
            if "<" in text and _stand_in_field(path) and not _free_text(o.kind, path):
                m = STAND_IN.search(text)
                if m:
                    yield Hit(path, f"{o.kind} {o.name}: {m.group(0)!r} is a stand-in left for the reader to "
                              f"replace; applied as written, {path.rsplit('.', 1)[-1]} names nothing that exists",
                              obj=o)
                    continue
            if "$" not in text and "{{" not in text:
                if ("://" in text or path.endswith("image")) and not _free_text(o.kind, path) \
                        and (id(o), path) not in shell:  # (what _expanded_empty can flag: an image or a URL)
                    yield from _expanded_empty(o, path, text)
                continue
            m = HELM.search(text) if not _external_secret_template(o.kind, path) else None
            if m:
                yield Hit(path, f"{o.kind} {o.name}: unrendered Helm template {m.group(0)!r}", obj=o)
                continue
            if ((id(o), path) in shell or _free_text(o.kind, path) or _kuberay_shell(o.obj, path)
                    or _shell_argument(o.obj, path) or _script_source(o.obj, path)):
                continue
            m = ENVSUBST.search(text)
            if m:
                yield Hit(path, f"{o.kind} {o.name}: unrendered placeholder {m.group(0)!r}; nothing expands it "
                          "here (Kubernetes expands only $(VAR) in command, args and env values)", obj=o)
                continue
            m = KUBE_EXPANSION.search(text)
            if m and not _kube_expands(path):
                yield Hit(path, f"{o.kind} {o.name}: {m.group(0)!r} is expanded only in command, args and env "
                          "values; here it stays literal", obj=o)


def _expanded_empty(o, path: str, text: str) -> Iterator[Hit]:
    parts = path.split(".")
    if len(parts) >= 3 and parts[-1] == "image" and parts[-3] in ("containers", "initContainers"):
        if EMPTY_IMAGE_PART.search(text.strip()) and not is_image_file(text):
            yield Hit(path, f"{o.kind} {o.name}: image {text!r} has an empty part, the mark of a variable "
                      "envsubst expanded to nothing (unset when the template was rendered)", obj=o)
    elif EMPTY_URL_HOST.search(text):
        yield Hit(path, f"{o.kind} {o.name}: {text[:80]!r} has a URL host with an empty label, the mark of a "
                  "variable envsubst expanded to nothing (unset when the template was rendered)", obj=o)


def _free_text(kind: str, path: str) -> bool:
    """Strings some other program expands or templates: rayStartParams, ConfigMap/Secret data, annotations, the
    template an External Secrets resource renders its Secret from (Go templates of its own: `{{ .password }}`)."""
    parts = path.split(".")
    if "rayStartParams" in parts:  # KubeRay runs `ray start --k=v ...` in a shell: $VAR is the pod's env
        return True
    if kind in DATA_KINDS and parts[0] in ("data", "stringData", "binaryData"):
        return True
    if _external_secret_template(kind, path):
        return True
    return "annotations" in parts


def _external_secret_template(kind: str, path: str) -> bool:
    return kind in EXTERNAL_SECRET_KINDS and "template" in path.split(".")


def _script_source(obj: dict, path: str) -> bool:
    """A step's script: a Tekton step's `script` (`{image, script}`: written to a file and run by its shebang's
    interpreter, `/bin/sh` without one) or an Argo Workflow script template's `source` (`{image, command: [bash],
    source}`: the command it names runs it). A shell expands its variables."""
    parts = path.split(".")
    node = node_at(obj, ".".join(parts[:-1]))
    if not isinstance(node, dict) or "image" not in node:
        return False
    return parts[-1] == "script" or (parts[-1] == "source" and isinstance(node.get("command"), list))


def _kuberay_shell(obj: dict, path: str) -> bool:
    """command/args of the Ray container (the first) of a head or worker group: KubeRay joins them into the
    `/bin/bash -lc` line that runs `ray start` (common/pod.go BuildPod), unless the cluster sets the
    `ray.io/overwrite-container-cmd: "true"` annotation or the command already runs `ray start` itself."""
    parts = path.split(".")
    if not ({"headGroupSpec", "workerGroupSpecs"} & set(parts)) or len(parts) < 4 or parts[-2] not in (
            "command", "args") or parts[-4:-2] != ["containers", "0"]:
        return False
    annotations = (obj.get("metadata") or {}).get("annotations") if isinstance(obj.get("metadata"), dict) else None
    if isinstance(annotations, dict) and str(annotations.get("ray.io/overwrite-container-cmd", "")).lower() == "true":
        return False
    container = node_at(obj, ".".join(parts[:-2]))
    if not isinstance(container, dict):
        return False
    argv = [a for key in ("command", "args") if isinstance(container.get(key), list) for a in container[key]]
    return not any("ray start" in str(a) for a in argv)


def _shell_argument(obj: dict, path: str) -> bool:
    """The script of a `sh -c` command/args pair outside a pod template (KubeRay's autoscalerOptions, a custom
    resource's container-like spec): the shell expands it as in a container."""
    parts = path.split(".")
    if len(parts) < 2 or parts[-2] not in ("command", "args") or not parts[-1].isdigit():
        return False
    from ..shell import script_in

    node = node_at(obj, ".".join(parts[:-2]))
    if not isinstance(node, dict):
        return False
    command = node.get("command") if isinstance(node.get("command"), list) else []
    argv = [*command, *(node.get("args") if isinstance(node.get("args"), list) else [])]
    found = script_in(argv)
    index = int(parts[-1]) + (len(command) if parts[-2] == "args" else 0)
    return bool(found) and found[0] == index


def _kube_expands(path: str) -> bool:
    parts = path.split(".")
    return (len(parts) >= 2 and parts[-2] in ("command", "args")) or (
        len(parts) >= 3 and parts[-1] == "value" and parts[-3] == "env")
