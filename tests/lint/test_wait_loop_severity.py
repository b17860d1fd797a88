"""GRPO841 by confidence: a wait loop whose probe cannot fail (`curl` without `-f`) stops at the first answer, which
is wrong only where the server answers an error status before it is ready. On other projects' manifests that is a
warning naming the assumption; a loop that gives up and carries on as if ready stays an error. Where the check stops:
what the awaited server answers while it starts is not in the manifest."""

from __future__ import annotations

import textwrap

from grpo_stack.lint.release import lint_manifests

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: bench}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: bench
          image: registry.example/bench:2.1.0
          command: [bash, -c]
          args:
            - |
              for i in $(seq 1 60); do
                {probe} && break
                {give_up}
                sleep 10
              done
              python bench.py
"""


def _findings(tmp_path, probe: str, give_up: str):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(JOB.format(probe=probe, give_up=give_up)))
    return [f for f in lint_manifests(str(path)).findings if f.code == "GRPO841"]


def test_a_probe_that_cannot_fail_is_a_warning_naming_the_assumption(tmp_path):
    (found,) = _findings(tmp_path, "curl -s http://localhost:8000/health",
                         'if [ "$i" -eq 60 ]; then exit 1; fi')
    assert found.severity.value == "warning" and "assumed: the server answers an HTTP error" in found.message


def test_a_loop_that_carries_on_after_its_last_attempt_stays_an_error(tmp_path):
    (found,) = _findings(tmp_path, "curl -sf http://localhost:8000/health", ":")
    assert found.severity.value == "error" and "carries on as if ready" in found.message
