"""The in-pod submit's package as a ConfigMap, for job mode: what the RayJob's entrypoint runs in the head pod.

    python -m grpo_stack.job.toolsmap --release NAME --namespace NS | kubectl apply -f -

A chart cannot read files outside itself, and job mode has no `kubectl cp` step (cluster mode's run-on-cluster.sh
copies the package into the head pod), so the package travels as `grpo_stack.zip` in the ConfigMap the chart
mounts, optional, at /etc/grpo-stack-tools (grpo-common.toolsConfigMapName); the RayJob's entrypoint is
`python3 /etc/grpo-stack-tools/grpo_stack.zip --follow ...` (its __main__.py unpacks it and runs the submit). The
zip holds the modules the in-pod
submit imports (found by the standard library's modulefinder, so a new import is carried without a list to keep)
and the data files beside them (the verl and miles key catalogues); its entries carry a fixed date, so the same
checkout gives the same bytes. A ConfigMap holds at most 1 MiB: LIMIT keeps the zip well under it.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import modulefinder
import sys
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
ENTRY = "grpo_stack.job.submit"
KEY = "grpo_stack.zip"
LIMIT = 768 * 1024  # base64 makes it 4/3 larger; the API server refuses a ConfigMap over 1 MiB
DATA_SUFFIXES = (".json",)
# Run as `python3 grpo_stack.zip ARGS`: unpacked first (the catalogues are read as files), then the in-pod submit.
# An entrypoint without quotes: KubeRay pastes it into the submitter's shell line and `ray job submit` re-joins it.
MAIN = """import os, runpy, sys, tempfile, zipfile
dest = tempfile.mkdtemp(prefix="grpo-stack-")
zipfile.ZipFile(os.path.dirname(os.path.abspath(__file__))).extractall(dest)
sys.path.insert(0, dest)
sys.argv[0] = "grpo_stack.job.submit"
runpy.run_module("grpo_stack.job.submit", run_name="__main__", alter_sys=True)
"""


class ToolsMapError(RuntimeError):
    pass


def files() -> list[Path]:
    """The package's files the in-pod submit needs: its import closure and the data files of those packages."""
    finder = modulefinder.ModuleFinder(path=[str(PACKAGE.parent)])
    finder.import_hook(ENTRY)
    modules = {Path(m.__file__) for name, m in finder.modules.items()
               if name.split(".")[0] == PACKAGE.name and m.__file__}
    dirs = {p.parent for p in modules}
    data = {p for d in dirs for p in d.iterdir() if p.suffix in DATA_SUFFIXES and p.is_file()}
    return sorted(modules | data)


def archive() -> bytes:
    buf = io.BytesIO()
    entries = [("__main__.py", MAIN.encode())]
    entries += [(str(path.relative_to(PACKAGE.parent)), path.read_bytes()) for path in files()]
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, content)
    data = buf.getvalue()
    if len(data) > LIMIT:
        raise ToolsMapError(f"the package zip is {len(data)} bytes, over the {LIMIT} a ConfigMap can carry")
    return data


def configmap(release: str, namespace: str) -> dict:
    """The ConfigMap grpo-common.toolsConfigMapName names: `<release>-tools` (the chart's fullname rule)."""
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{release}-tools"[:63].rstrip("-"), "namespace": namespace,
                     "labels": {"app.kubernetes.io/name": "tools", "app.kubernetes.io/instance": release,
                                "app.kubernetes.io/part-of": "grpo-stack"}},
        "binaryData": {KEY: base64.b64encode(archive()).decode()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grpo_stack.job.toolsmap", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--release", required=True)
    p.add_argument("--namespace", required=True)
    opts = p.parse_args(argv)
    try:
        json.dump(configmap(opts.release, opts.namespace), sys.stdout, indent=1)
    except ToolsMapError as exc:
        print(f"toolsmap: {exc}", file=sys.stderr)
        return 2
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
