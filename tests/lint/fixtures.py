"""Rule fixtures: tests/lint/rules/fixtures/<CODE>/{good,bad}-*.yaml.

A values fixture starts with `# base: values/<file>.yaml` and is merged on top of that shipped file (like
`helm -f base -f fixture`). A manifest fixture is a plain Kubernetes YAML stream. In bad fixtures, each line
where the rule must report carries `# expect: CODE`, or the line before it carries `# expect-next: CODE`.
"""

from __future__ import annotations

import re
from pathlib import Path

from grpo_stack.lint.engine import lint_values
from grpo_stack.lint.release import lint_manifests, looks_like_manifests
from grpo_stack.lint.rules.pod_hardening import FOLDED
from grpo_stack.lint.suppress import LintConfig
from grpo_stack.paths import REPO_ROOT

FOLDED_CODES = {rule.CODE for rule in FOLDED}

FIXTURES = Path(__file__).parent / "rules" / "fixtures"
BASE = re.compile(r"^#\s*base:\s*(\S+)")
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
EXPECT_NEXT = re.compile(r"^\s*#\s*expect-next:\s*([A-Z0-9, ]+)")


def all_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("GRPO*/*.yaml"))


def expected_lines(path: Path, code: str) -> set[int]:
    lines = path.read_text().splitlines()
    out = set()
    for i, line in enumerate(lines, start=1):
        m = EXPECT.search(line)
        if m and code in [c.strip() for c in m.group(1).split(",")]:
            out.add(i)
        m = EXPECT_NEXT.match(line)
        if m and code in [c.strip() for c in m.group(1).split(",")]:
            out.add(i + 1)
    return out


def lint_fixture(path: Path):
    first = path.read_text().splitlines()[0] if path.read_text() else ""
    m = BASE.match(first)
    if m:
        return lint_values([str(REPO_ROOT / m.group(1)), str(path)], release="grpo", namespace="grpo")
    assert looks_like_manifests(str(path)), f"{path}: neither `# base:` values fixture nor manifests"
    # The pod-hardening rules' own fixtures hold manifests to each rule, as the chart's output is; on other
    # manifests they report through GRPO809 (its fixtures use the default).
    return lint_manifests(str(path), config=LintConfig(settings={"pod-hardening": {"each": True}})) \
        if path.parent.name in FOLDED_CODES else lint_manifests(str(path))


GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: run}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: {image}
          command: {command}
          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def gpu_job(command: str, image: str = "registry.example/train:1.2.3", gpus: int = 1) -> str:
    """A one-container Job given `gpus` GPUs, running `command` (a JSON list) in `image`, as YAML text."""
    return GPU_JOB.format(image=image, command=command, gpus=gpus)


def severities(tmp_path: Path, manifests: str, code: str) -> list[str]:
    """The severities of `code`'s findings on `manifests` (YAML text) written to a file and linted as manifests."""
    path = tmp_path / "manifests.yaml"
    path.write_text(manifests)
    return [f.severity.value for f in lint_manifests(str(path)).findings if f.code == code]
