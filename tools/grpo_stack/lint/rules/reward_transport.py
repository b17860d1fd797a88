"""GRPO819 reward-url-plain-http."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from ..finding import Hit, Severity
from ._objects import containers

CODE = "GRPO819"
NAME = "reward-url-plain-http"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "An external reward endpoint outside the cluster is reached over plain HTTP."
DOC = """## What it does
Reads the reward URL of the run — `global.job.reward.url` (kind `external`) in values; in manifests, every env
var named like a reward endpoint (`REWARD_URL`, `RM_URL`, `GRPO_REWARD_URL`, `REWARD_ENDPOINT`, …) and every
`--rm-url` / `reward_model.url=` / `custom_reward_function.url=` argument — and reports an `http://` URL whose
host is outside the cluster: anything but a Service name (`scorer`, `scorer.<namespace>` for the release's or
the object's namespace, `*.svc`, `*.svc.cluster.local`), `localhost` or a loopback address. A private VPC
address is outside the cluster too.

## Why is this bad?
Every rollout sends the prompt, the model's response and the dataset's label to the reward endpoint, and the
score comes back: in clear, anyone on the path reads the training data and can rewrite the rewards the policy
learns from. Inside the cluster the pod network (and the chart's NetworkPolicies) bound that path; outside, only
TLS does.

## Example
```yaml
global:
  job:
    reward:
      kind: external
      url: http://rewards.example.com/score
```
Use instead:
```yaml
global:
  job:
    reward:
      kind: external
      url: https://rewards.example.com/score
```

## Fix
Serve the endpoint over HTTPS (or run it in the cluster, in the release namespace, behind the chart's
NetworkPolicies).
"""

ENV_NAME = re.compile(r"(^|_)(REWARD|RM)(_[A-Z0-9]+)*_(URL|ENDPOINT|ADDRESS)$", re.IGNORECASE)
ARG = re.compile(r"(?:--rm-url[= ]+|reward_model\.url=|custom_reward_function\.url=)[\"']?(\S+?)[\"']?(?:\s|$)")


def outside_plain_http(url: str, namespaces: set[str]) -> bool:
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != "http" or not parts.hostname:
        return False
    host = parts.hostname.lower().rstrip(".")
    if host == "localhost" or host.endswith((".svc", ".svc.cluster.local", ".cluster.local")):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    labels = host.split(".")
    return len(labels) > 2 or (len(labels) == 2 and labels[1] not in namespaces)  # `scorer.rl`: a Service


def check(ctx) -> Iterator[Hit]:
    if ctx.has_values:
        url = ctx.get("global.job.reward.url")
        if (ctx.get("global.job.reward.kind") == "external" and isinstance(url, str)
                and outside_plain_http(url, {ctx.namespace})):
            yield Hit("global.job.reward.url", f"the reward endpoint {url} is outside the cluster and plain HTTP: "
                      "prompts, responses, labels and scores travel in clear")
        return
    for o, pod_path, pod in ctx.pod_templates():
        namespaces = {ctx.namespace, str((o.obj.get("metadata") or {}).get("namespace") or "")}
        for field, i, c in containers(pod):
            for j, e in enumerate(c.get("env") or []):
                if isinstance(e, dict) and ENV_NAME.search(str(e.get("name", ""))) and isinstance(e.get("value"), str) \
                        and outside_plain_http(e["value"], namespaces):
                    yield Hit(f"{pod_path}.{field}.{i}.env.{j}.value", f"{o.kind} {o.name}: {e['name']} "
                              f"{e['value']} is outside the cluster and plain HTTP", obj=o)
            for part in ("command", "args"):
                items = c.get(part) if isinstance(c.get(part), list) else []
                for j, word in enumerate(items):
                    following = items[j + 1] if j + 1 < len(items) else None
                    yield from _args(o, f"{pod_path}.{field}.{i}.{part}.{j}", word, following, namespaces)
    for o in ctx.of_kind("RayJob"):
        entry = (o.obj.get("spec") or {}).get("entrypoint")
        if isinstance(entry, str):
            yield from _args(o, "spec.entrypoint", entry, None,
                             {ctx.namespace, str((o.obj.get("metadata") or {}).get("namespace") or "")})


def _args(o, path: str, word, following, namespaces: set[str]) -> Iterator[Hit]:
    if not isinstance(word, str):
        return
    text = f"{word} {following}" if word == "--rm-url" and isinstance(following, str) else word
    for url in ARG.findall(text):
        if outside_plain_http(url, namespaces):
            yield Hit(path, f"{o.kind} {o.name}: the reward endpoint {url} is outside the cluster and plain HTTP",
                      obj=o)
