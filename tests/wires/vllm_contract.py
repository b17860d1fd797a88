"""Run with the start-up venv's interpreter (vllm installed): each recorded request against vLLM's own models.

stdin: {"requests": [{"path": ..., "body": ...}, ...]}; argv[1]: where to write {"vllm": version, "routes": [...],
"problems": [...]} (vLLM logs to stdout).
A POST must go to a route of vLLM's own OpenAI routers and fit that route's request model strictly
(tests/wires/strict_models.py): vLLM logs and ignores a field it does not know, so a misspelt sampling
parameter would silently fall back to its default.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.wires.strict_models import problems  # noqa: E402

# Where vLLM keeps its OpenAI request models and routers (both moved between releases).
PROTOCOL_MODULES = ("vllm.entrypoints.openai.protocol", "vllm.entrypoints.openai.completion.protocol",
                    "vllm.entrypoints.openai.chat_completion.protocol")
ROUTER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.openai.completion.api_router",
                  "vllm.entrypoints.openai.chat_completion.api_router", "vllm.entrypoints.openai.models.api_router")
MODELS_BY_PATH = {"/v1/completions": "CompletionRequest", "/v1/chat/completions": "ChatCompletionRequest"}


def routes() -> tuple[set[str], list[str]]:
    """Every path vLLM's own FastAPI routers declare, and why a router module did not import."""
    found: set[str] = set()
    errors = []
    for module in ROUTER_MODULES:
        try:
            router = getattr(importlib.import_module(module), "router", None)
        except ImportError as error:
            errors.append(f"{module}: {error}")
            continue
        found |= {getattr(r, "path", "") for r in getattr(router, "routes", [])}
    return found - {""}, errors


def request_model(name: str) -> type:
    errors = []
    for module in PROTOCOL_MODULES:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError as error:
            errors.append(f"{module}: {error}")
            continue
        if found is not None:
            return found
    raise SystemExit(f"vLLM's {name} is in none of {PROTOCOL_MODULES} (import errors: {errors})")


def main() -> None:
    import vllm

    recorded = json.load(sys.stdin)["requests"]
    served, errors = routes()
    found = []
    for i, request in enumerate(recorded):
        name = MODELS_BY_PATH.get(request["path"])
        if request["path"] not in served or name is None:
            found.append(f"request {i}: POST {request['path']} is no completion route of vLLM's routers "
                         f"(routers not imported: {errors})")
            continue
        found += [f"request {i}: {p}" for p in problems(request_model(name), request["body"], name)]
    Path(sys.argv[1]).write_text(json.dumps({"vllm": vllm.__version__, "routes": sorted(served), "problems": found}))


if __name__ == "__main__":
    main()
