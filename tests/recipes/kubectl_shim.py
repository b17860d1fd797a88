#!/usr/bin/env python3
"""A recording `kubectl` for tests: answers from a JSON fixture, copies `cp` targets into a local directory and
runs `exec` commands locally. It is NOT a cluster: it implements only the calls the recipes make.

State file ($KUBECTL_SHIM_STATE): {"rayclusters": [{"name", "namespace", "labels", "replicas"}],
"pods": [{"name", "namespace", "labels", "ready"}], "configmaps": [{"name", "namespace", "labels", "data"}],
"deployments": [{"name", "namespace", "labels", "available"}]}; "unreachable": true makes every call fail as
kubectl does when no API server answers.
Every call is appended to $KUBECTL_SHIM_LOG as JSON.
Pod paths under /tmp/grpo-stack map to $KUBECTL_SHIM_ROOT/tmp/grpo-stack.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

POD_PREFIX = "/tmp/grpo-stack"


def selector_match(selector: str, labels: dict) -> bool:
    for term in filter(None, selector.split(",")):
        k, _, v = term.partition("=")
        if labels.get(k) != v:
            return False
    return True


def wait(items: list[dict], condition: str, kind: str, ns: str, selector: str) -> int:
    """`kubectl wait` over fixture items: fails at once (as a timeout would) on the first one not in `condition`."""
    found = [i for i in items if i["namespace"] == ns and selector_match(selector, i["labels"])]
    if not found:
        print("error: no matching resources found", file=sys.stderr)
        return 1
    waiting = [i["name"] for i in found if not i[condition]]
    if waiting:
        print(f"error: timed out waiting for the condition on {kind}/{waiting[0]}", file=sys.stderr)
        return 1
    return 0


def local(path: str) -> str:
    root = os.environ["KUBECTL_SHIM_ROOT"]
    return root + path if path.startswith(POD_PREFIX) else path


def main(argv: list[str]) -> int:
    with open(os.environ["KUBECTL_SHIM_LOG"], "a") as log:
        log.write(json.dumps(argv) + "\n")
    state = json.load(open(os.environ["KUBECTL_SHIM_STATE"]))
    if state.get("unreachable"):  # what kubectl prints when no API server answers at the kubeconfig's address
        print("The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?",
              file=sys.stderr)
        return 1
    ns = "default"
    args = []
    it = iter(argv)
    for a in it:
        if a in ("--namespace", "-n"):
            ns = next(it)
        else:
            args.append(a)
    opts = {}
    rest = []
    it = iter(args)
    for a in it:
        if a in ("-l", "-o"):
            opts[a] = next(it)
        elif a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            opts[k] = v
        else:
            rest.append(a)
    verb = rest[0]
    if verb == "get":
        kind = rest[1]
        items = (state["rayclusters"] if kind.startswith("raycluster")
                 else state.get("configmaps", []) if kind.startswith("configmap")
                 else state.get("deployments", []) if kind.startswith("deployment") else state["pods"])
        items = [i for i in items if i["namespace"] == ns and selector_match(opts.get("-l", ""), i["labels"])]
        if len(rest) > 2:
            items = [i for i in items if i["name"] == rest[2]]
            if not items:
                print(f'Error from server (NotFound): {kind} "{rest[2]}" not found', file=sys.stderr)
                return 1
        path = opts.get("-o", "")
        if path == "jsonpath={.items[*].metadata.name}":
            print(" ".join(i["name"] for i in items), end="")
        elif path == "jsonpath={.data.job\\.json}":
            print(items[0]["data"]["job.json"], end="")
        elif path == "jsonpath={.spec.workerGroupSpecs[*].replicas}":
            print(" ".join(str(r) for r in items[0]["replicas"]), end="")
        else:
            print("NAME READY\n" + "\n".join(f"{i['name']} {i.get('ready')}" for i in items))
        return 0
    if verb == "wait":
        if rest[1].startswith("deployment"):
            if opts.get("--for") != "condition=Available":
                print(f"kubectl shim: unsupported wait {argv}", file=sys.stderr)
                return 1
            return wait(state.get("deployments", []), "available", "deployments", ns, opts["-l"])
        return wait(state["pods"], "ready", "pods", ns, opts["-l"])
    if verb == "cp":
        src, dest = rest[1], rest[2].split(":", 1)[1]
        target = local(dest)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copy(src, target)
        return 0
    if verb == "exec":
        pod = rest[1]
        if not any(p["name"] == pod and p["namespace"] == ns for p in state["pods"]):
            print(f'Error from server (NotFound): pods "{pod}" not found', file=sys.stderr)
            return 1
        cmd = [local(a) for a in argv[argv.index("--") + 1:]]
        if cmd[:2] == ["mkdir", "-p"]:
            os.makedirs(cmd[2], exist_ok=True)
            return 0
        return subprocess.call(cmd)
    print(f"kubectl shim: unsupported call {argv}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
