"""grpo-render and grpo-lint render with the same release and namespace by default: the predecessor's render
defaulted to `default` and the lint to `grpo`, so `grpo-render --job` printed `.default.svc` URLs."""

from __future__ import annotations

from grpo_stack.cli.lint import lint_parser
from grpo_stack.cli.render import parser as render_parser
from grpo_stack.release import DEFAULT_NAMESPACE, DEFAULT_RELEASE


def test_render_and_lint_share_release_and_namespace_defaults():
    lint = lint_parser().parse_args(["values/qwen3-8b.yaml"])
    render = render_parser().parse_args(["values/qwen3-8b.yaml"])
    # grpo-lint's --namespace is unset by default so manifests keep their own; values render with the default.
    assert (lint.release, lint.namespace or DEFAULT_NAMESPACE) == (render.release, render.namespace) == (
        DEFAULT_RELEASE, DEFAULT_NAMESPACE)
