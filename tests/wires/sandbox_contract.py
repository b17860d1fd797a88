"""The reward service -> SandboxFusion wire, against SandboxFusion's own client models, strictly.

The models are `sandbox_fusion.models` from `sandbox-fusion==0.3.7` (PyPI, SandboxFusion's own client release):
`RunCodeRequest` for what is posted to `/run_code`, `RunCodeResponse` for what a sandbox answers. A request or
reply must carry every required field and nothing the model does not declare; the reward service's own requests
must also send every declared field (`every_field`: a field left to the server's default is a setting the chart
does not control; the helm-test hook may leave them).

Where the check stops: at the client's models. The server image (`volcengine/sandbox-fusion:server-20250609`)
cannot run here; its own request model at that date (bytedance/SandboxFusion `sandbox/server/sandbox_api.py`,
before commit c0219be of 2025-06-17) declares the same request fields, `memory_limit_MB` only from that commit on.
"""

from __future__ import annotations

from sandbox_fusion.models import RunCodeRequest, RunCodeResponse

from tests.wires.strict_models import problems

RUN_CODE_PATH = "/run_code"


def request_problems(body: object, every_field: bool = False) -> list[str]:
    return problems(RunCodeRequest, body, "run_code request", every_field=every_field)


def reply_problems(body: object) -> list[str]:
    return problems(RunCodeResponse, body, "run_code reply")
