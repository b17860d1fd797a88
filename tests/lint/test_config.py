"""`.grpo-lint.yaml` settings: the image-pinning allow-list reaches GRPO701, and a malformed section is exit 2."""

from __future__ import annotations

import pytest
from grpo_stack.cli.lint import main

POD = """apiVersion: v1
kind: Pod
metadata: {name: app, namespace: team}
spec:
  containers:
    - name: app
      image: {image}
      imagePullPolicy: IfNotPresent
"""


def lint(capsys, tmp_path, image: str, config: str | None) -> tuple[int, str]:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD.replace("{image}", image))
    argv = ["--format", "json", "--select", "GRPO701", str(manifest)]
    if config is not None:
        cfg = tmp_path / "lint.yaml"
        cfg.write_text(config)
        argv = ["--config", str(cfg), *argv]
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_pinned_pattern_accepts_a_registry_tag_the_rule_calls_floating(capsys, tmp_path):
    """A project tag the documented rule takes as moving (`stable`) is pinned when the allow-list says so: the
    fixed form must never be flagged (issue: immutable project-built tags reported as floating)."""
    code, out = lint(capsys, tmp_path, "registry.example/team/app:stable", None)
    assert code == 1 and "moving tag" in out
    code, out = lint(capsys, tmp_path, "registry.example/team/app:stable",
                     "image-pinning:\n  pinned: ['registry.example/team/*:stable']\n")
    assert code == 0, out


def test_floating_pattern_flags_a_tag_the_registry_moves(capsys, tmp_path):
    """A tag that looks immutable but that the registry re-points (`release-417` rebuilt in place) is caught
    once listed as floating (an error); a tag that names no version at all (`prod`) is reported without it, as a
    warning on a project's own image (it may be one build)."""
    assert lint(capsys, tmp_path, "registry.example/team/app:release-417", None)[0] == 0
    code, out = lint(capsys, tmp_path, "registry.example/team/app:release-417",
                     "image-pinning:\n  floating: ['registry.example/*:release-*']\n")
    assert code == 1 and "listed as floating in the lint config" in out
    code, out = lint(capsys, tmp_path, "registry.example/team/app:prod", None)
    assert code == 0 and "names no version" in out and "warning" in out, out


def test_pinned_wins_over_floating_but_not_over_a_missing_tag(capsys, tmp_path):
    cfg = "image-pinning:\n  floating: ['*:prod']\n  pinned: ['registry.example/team/app*']\n"
    assert lint(capsys, tmp_path, "registry.example/team/app:prod", cfg)[0] == 0
    code, out = lint(capsys, tmp_path, "registry.example/team/app", cfg)
    assert code == 1 and "no tag" in out


def test_suppressions_and_settings_in_one_file(capsys, tmp_path):
    cfg = ("disable:\n  - {code: GRPO701, reason: 'vendor image, pinned upstream', paths: ['*/other.yaml']}\n"
           "image-pinning: {pinned: ['registry.example/*']}\n")
    assert lint(capsys, tmp_path, "registry.example/app:main", cfg)[0] == 0


@pytest.mark.parametrize("config, where", [
    ("image-pinning: [a]\n", "image-pinning"),
    ("image-pinning: {floating: 'x:*'}\n", "image-pinning.floating"),
    ("image-pinning: {pinned: [1]}\n", "image-pinning.pinned"),
    ("image-pinning: {allow: []}\n", "image-pinning"),
    ("imagepinning: {pinned: []}\n", "imagepinning"),
])
def test_malformed_settings_are_input_errors(capsys, tmp_path, config, where):
    code, out = lint(capsys, tmp_path, "python:3.11.15", config)
    assert code == 2 and f'"key_path": "{where}"' in out, out
