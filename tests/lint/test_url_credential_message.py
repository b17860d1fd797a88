"""What a user reads when a URL in a long string carries a credential (GRPO202): the URL itself, masked, and not
the start of the serve config or script it sits in, which may be nowhere near it; the credential never printed."""

from __future__ import annotations

from grpo_stack.cli.lint import main as lint_main

TOKEN = "ghp_" + "Zq7Lk2Pw9Xv4Rt6Yb1Nm8Hc3Jd5Fs0Ga2Ue4"
SERVICE = f"""apiVersion: ray.io/v1
kind: RayService
metadata: {{name: folding, namespace: serving}}
spec:
  serveConfigV2: |
    applications:
      - name: fold
        import_path: serve_app:deployment
        route_prefix: /
        runtime_env:
          working_dir: "https://{TOKEN}@github.com/example-org/fold-serve/archive/v1.2.zip"
          pip: [numpy==2.1.3]
  rayClusterConfig:
    headGroupSpec:
      rayStartParams: {{}}
      template:
        spec:
          containers: [{{name: ray-head, image: rayproject/ray:2.53.0-py311}}]
"""


def test_the_message_quotes_the_url_masked_not_the_string_around_it(tmp_path, capsys):
    manifest = tmp_path / "rayservice.yaml"
    manifest.write_text(SERVICE)
    lint_main(["--no-cache", "--select", "GRPO202", str(manifest)])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "GRPO202" in line]
    assert len(lines) == 1, out
    assert "https://…@github.com/example-org/fold-serve/archive/v1.2.zip" in lines[0], lines[0]
    assert "applications" not in lines[0] and TOKEN not in out
