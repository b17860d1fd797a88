"""GRPO867 pod-security-enforced."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..finding import Hit, Severity
from ._objects import containers
from ._podsecurity import namespace_of, seccomp_type

CODE = "GRPO867"
NAME = "pod-security-enforced"
SEVERITY = Severity.ERROR
CATEGORY = "correctness"
SUMMARY = ("A pod template breaks the Pod Security level its namespace enforces (a Namespace of the set labelled "
           "`pod-security.kubernetes.io/enforce`): the API server refuses its Pods.")
DOC = """## What it does
Reads every Namespace of the set whose label `pod-security.kubernetes.io/enforce` is `baseline` or `restricted`
(and whose `enforce-version`, if set, is `latest` or v1.25 or later), and holds every pod template placed in it
(Deployments, Jobs, StatefulSets, bare Pods, the pods of custom resources) to that level's checks, as the API
server's PodSecurity admission runs them on each Pod:

- `baseline`: no `hostNetwork`, `hostPID` or `hostIPC`; no `privileged` container; capabilities added only from
  the default set (`AUDIT_WRITE`, `CHOWN`, `DAC_OVERRIDE`, `FOWNER`, `FSETID`, `KILL`, `MKNOD`, `NET_BIND_SERVICE`,
  `SETFCAP`, `SETGID`, `SETPCAP`, `SETUID`, `SYS_CHROOT`); no `hostPath` volume; no `hostPort`; no `Unconfined`
  seccomp profile.
- `restricted`, besides: volumes only of the types `configMap`, `csi`, `downwardAPI`, `emptyDir`, `ephemeral`,
  `persistentVolumeClaim`, `projected`, `secret` (and `image`); `allowPrivilegeEscalation: false` in every
  container; `runAsNonRoot: true` for the pod or every container, never `false`; no `runAsUser: 0`; a
  `RuntimeDefault` or `Localhost` seccomp profile for the pod or every container; capabilities that drop `ALL` and
  add nothing but `NET_BIND_SERVICE`.

Init containers are held to the same. Checks a version of the standard treats otherwise (sysctls, SELinux options,
AppArmor, `procMount`) are left out: no error where the verdict is not certain.

## Why is this bad?
PodSecurity admission refuses each Pod that breaks the level (`violates PodSecurity "restricted:latest": ...`).
A Deployment, Job or StatefulSet is itself admitted with a warning, and then its controller cannot create a single
pod (`FailedCreate`): the workload sits at zero pods with nothing in its own status saying why.

## Example
```yaml
kind: Namespace
metadata: {name: rag, labels: {pod-security.kubernetes.io/enforce: restricted}}
---
kind: Deployment
metadata: {name: api, namespace: rag}
spec:
  template:
    spec:
      containers: [{name: api, image: registry.example.com/api:1.4.0}]
```
Use instead:
```yaml
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: api
          image: registry.example.com/api:1.4.0
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}
```

## Fix
Give the pod what the message lists, or place it in a namespace whose level it meets.
"""

LABEL = "pod-security.kubernetes.io/enforce"
VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("baseline", "restricted")
# k8s.io/pod-security-admission policy: check_capabilities_baseline.go (the container runtime's default set)
BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
# check_restrictedVolumes.go (`image` volumes are allowed where the API serves them)
RESTRICTED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                                "projected", "secret", "image"})
CONFINED_SECCOMP = frozenset({"RuntimeDefault", "Localhost"})


def check(ctx) -> Iterator[Hit]:
    enforced = _enforced(ctx)
    if not enforced:
        return
    for o, pod_path, pod in ctx.pod_templates():
        ns = namespace_of(o, ctx.namespace)
        level = enforced.get(ns)
        if level is None:
            continue
        reasons = baseline(pod) + (restricted(pod) if level == "restricted" else [])
        if reasons:
            refused = "the API server refuses the Pod" if o.kind == "Pod" else (
                "the API server refuses each of its Pods, so it never runs one (FailedCreate)")
            yield Hit(pod_path, f"{o.kind} {o.name}: namespace {ns} enforces Pod Security {level!r} ({LABEL}), and "
                      f"its pods break it: {'; '.join(reasons)}: {refused}", obj=o)


def _enforced(ctx) -> dict[str, str]:
    """Namespace name -> the level it enforces, for the Namespaces of the set that enforce baseline or restricted at
    a version whose checks are the ones above."""
    out = {}
    for n in ctx.of_kind("Namespace"):
        labels = (n.obj.get("metadata") or {}).get("labels") or {}
        level = str(labels.get(LABEL, "")) if isinstance(labels, dict) else ""
        if level in LEVELS and _current(str(labels.get(VERSION_LABEL, "latest"))):
            out[n.name] = level
    return out


def _current(version: str) -> bool:
    if version == "latest":
        return True
    major, _, minor = version.removeprefix("v").partition(".")
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) >= (1, 25)


def _context(c: dict[str, Any]) -> dict[str, Any]:
    sc = c.get("securityContext")
    return sc if isinstance(sc, dict) else {}


def _name(c: dict[str, Any], i: int) -> str:
    return str(c.get("name", i))


def baseline(pod: dict[str, Any]) -> list[str]:
    """What the pod breaks of the baseline level."""
    out = [f"{flag}=true" for flag in ("hostNetwork", "hostPID", "hostIPC") if pod.get(flag) is True]
    pod_sc = pod.get("securityContext") if isinstance(pod.get("securityContext"), dict) else {}
    mains = list(containers(pod))
    out += [f"container {_name(c, i)} is privileged" for _f, i, c in mains if _context(c).get("privileged") is True]
    for _f, i, c in mains:
        added = (_context(c).get("capabilities") or {}).get("add") if isinstance(
            _context(c).get("capabilities"), dict) else None
        extra = sorted({str(a) for a in added or []} - BASELINE_CAPABILITIES) if isinstance(added, list) else []
        if extra:
            out.append(f"container {_name(c, i)} adds capabilities {', '.join(extra)}")
    volumes = [v for v in pod.get("volumes") or [] if isinstance(v, dict)]
    out += [f"volume {v.get('name')} is a hostPath" for v in volumes if "hostPath" in v]
    for _f, i, c in mains:
        ports = [p.get("hostPort") for p in c.get("ports") or [] if isinstance(p, dict) and p.get("hostPort")]
        if ports:
            out.append(f"container {_name(c, i)} uses hostPort {ports[0]}")
    if seccomp_type(pod_sc) == "Unconfined":
        out.append("the pod's seccomp profile is Unconfined")
    out += [f"container {_name(c, i)}'s seccomp profile is Unconfined" for _f, i, c in mains
            if seccomp_type(_context(c)) == "Unconfined"]
    return out


def restricted(pod: dict[str, Any]) -> list[str]:
    """What the pod breaks of the restricted level beyond baseline."""
    out = []
    pod_sc = pod.get("securityContext") if isinstance(pod.get("securityContext"), dict) else {}
    mains = list(containers(pod))
    for v in pod.get("volumes") or []:
        kinds = set(v) - {"name"} if isinstance(v, dict) else set()
        if kinds and not kinds & RESTRICTED_VOLUMES and "hostPath" not in kinds:  # hostPath: baseline said so
            out.append(f"volume {v.get('name')} is of type {sorted(kinds)[0]}")
    out += [f"container {_name(c, i)} does not set allowPrivilegeEscalation: false" for _f, i, c in mains
            if _context(c).get("allowPrivilegeEscalation") is not False]
    pod_non_root = pod_sc.get("runAsNonRoot")
    unset = [_name(c, i) for _f, i, c in mains if _context(c).get("runAsNonRoot") is None]
    explicit_false = [_name(c, i) for _f, i, c in mains if _context(c).get("runAsNonRoot") is False]
    if pod_non_root is False or explicit_false or (pod_non_root is not True and unset):
        out.append("runAsNonRoot is not true" + (f" (containers {', '.join(explicit_false or unset)})"
                                                 if pod_non_root is not False else " (the pod)"))
    if pod_sc.get("runAsUser") == 0:
        out.append("the pod runs as user 0")
    out += [f"container {_name(c, i)} runs as user 0" for _f, i, c in mains if _context(c).get("runAsUser") == 0]
    pod_profile = seccomp_type(pod_sc)
    effective = [(_name(c, i), seccomp_type(_context(c)) or pod_profile) for _f, i, c in mains]
    missing = [n for n, profile in effective if profile not in CONFINED_SECCOMP and profile != "Unconfined"]
    if missing:  # (an Unconfined profile is baseline's finding above)
        out.append(f"no RuntimeDefault or Localhost seccomp profile (containers {', '.join(missing)})")
    for _f, i, c in mains:
        caps = _context(c).get("capabilities") if isinstance(_context(c).get("capabilities"), dict) else {}
        drop = {str(d) for d in caps.get("drop") or []} if isinstance(caps.get("drop"), list) else set()
        add = {str(a) for a in caps.get("add") or []} if isinstance(caps.get("add"), list) else set()
        if "ALL" not in drop:
            out.append(f"container {_name(c, i)} does not drop ALL capabilities")
        extra = (add & BASELINE_CAPABILITIES) - {"NET_BIND_SERVICE"}  # adds beyond the default set: baseline's
        if extra:
            out.append(f"container {_name(c, i)} adds {', '.join(sorted(extra))}")
    return out
