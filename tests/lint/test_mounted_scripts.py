"""A script a container runs by path from a configMap volume of the same manifests is read as that container's
script (lint/shell.py): through a shell or under a shell shebang, through the volume's `items` and a `subPath`
mount; never a Python file, or a file no ConfigMap of the set holds."""

from __future__ import annotations

import pytest

from tests.lint.fixtures import severities

CONFIG_MAP = """apiVersion: v1
kind: ConfigMap
metadata: {{name: steps}}
data:
  {key}: |
{text}
---
"""
JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: prep}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: prep
          image: python:3.11.9-slim
          command: {command}
          volumeMounts: [{mount}]
      volumes:
        - name: steps
          configMap: {volume}
"""
INSTALL = "    pip install datasets"


def manifests(command: str, key: str = "prep.sh", text: str = INSTALL, mount: str = "{name: steps, mountPath: /s}",
              volume: str = "{name: steps}") -> str:
    return CONFIG_MAP.format(key=key, text=text) + JOB.format(command=command, mount=mount, volume=volume)


@pytest.mark.parametrize(("command", "kw", "found"), [
    ('["bash", "/s/prep.sh"]', {}, True),
    ('["/usr/bin/env", "sh", "-e", "/s/prep.sh"]', {}, True),
    ('["/s/prep.sh"]', {"text": "    #!/bin/sh\n" + INSTALL}, True),
    ('["/s/prep.sh"]', {}, False),  # run directly without a shell shebang: not known to be a shell script
    ('["python", "/s/prep.sh"]', {}, False),
    ('["bash", "/s/other.sh"]', {}, False),  # no such key
    ('["bash", "/opt/run.sh"]', {"mount": "{name: steps, mountPath: /opt/run.sh, subPath: prep.sh}"}, True),
    ('["bash", "/s/run.sh"]', {"volume": "{name: steps, items: [{key: prep.sh, path: run.sh}]}"}, True),
    ('["bash", "/s/prep.sh"]', {"volume": "{name: steps, items: [{key: prep.sh, path: run.sh}]}"}, False),
], ids=["bash", "env-sh-flags", "shebang", "no-shebang", "python", "missing-key", "subpath", "items", "items-hide"])
def test_a_mounted_script_is_read_where_the_container_runs_it(tmp_path, command, kw, found):
    assert bool(severities(tmp_path, manifests(command, **kw), "GRPO870")) == found


def test_a_file_an_inline_script_calls_is_not_followed(tmp_path):
    """`bash -c "..."` is the inline script's: its own install is reported; a mounted file it calls in turn is not
    read (a limit: only the file the container's own command names is)."""
    assert len(severities(tmp_path, manifests('["bash", "-c", "pip install tqdm && bash /s/prep.sh"]'),
                          "GRPO870")) == 1
