"""Several values files linted together: Helm renders in threads ahead of the linting (engine.lint_values_many)
give the same results, in the same order, as one file after the other."""

from __future__ import annotations

import os
import threading

import pytest
from grpo_stack import render
from grpo_stack.lint import engine
from grpo_stack.lint.cache import cache_entry
from grpo_stack.lint.engine import lint_values, lint_values_many
from grpo_stack.paths import REPO_ROOT
from grpo_stack.render import RenderError

BASE = str(REPO_ROOT / "values" / "qwen3-235b.yaml")
VALUES = sorted(str(p) for p in (REPO_ROOT / "values").glob("*.yaml"))


@pytest.fixture
def items(tmp_path) -> list[list[str]]:
    """Outcomes a values file can have, between shipped files: an error finding, a warning, an inline
    suppression, a schema error, a shape error, an unreadable file, a clean file."""
    files = {
        "short.yaml": "global:\n  components:\n    vllm: true\nvllm:\n  maxModelLen: 12288\n",
        "stage.yaml": "fsx-utils:\n  model:\n    repo: Qwen/Qwen3-4B\n",
        "suppressed.yaml": "global:\n  components:\n    vllm: true\nvllm:\n"
                           "  maxModelLen: 12288  # grpo-lint: disable=GRPO502 evaluation only\n",
        "schema.yaml": "global:\n  cluster:\n    efaPerNode: -3\n",
        "shape.yaml": "vllm: 3\n",
        "broken.yaml": "a: [\n",
        "clean.yaml": "global:\n  storage:\n    mountPath: /fsx\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    over_base = [[BASE, str(tmp_path / n)] for n in files]
    return [[VALUES[0]], *over_base[:3], [VALUES[1]], *over_base[3:], *([v] for v in VALUES[2:])]


@pytest.mark.parametrize("ahead", [1, 2, 3])
def test_renders_ahead_give_the_results_of_one_after_the_other(items, ahead):
    """A render handed to the wrong file, or a result out of order, would make grpo-lint report one file's
    problems on another: every file's findings and errors equal those of linting it alone."""
    alone = [cache_entry(lint_values(files, release="grpo", namespace="grpo")) for files in items]
    together = [cache_entry(r) for r in lint_values_many(items, release="grpo", namespace="grpo", ahead=ahead)]
    assert together == alone
    codes = {f["code"] for e in alone for f in e["findings"]}
    assert {"GRPO502", "GRPO561"} <= codes and sum(bool(e["input_errors"]) for e in alone) == 3


def test_a_render_refused_in_a_thread_is_located_as_before(items, monkeypatch):
    """Helm refusing one file's values (raised in the render thread) is that file's located input error, and
    the files after it are still linted."""
    real = engine.render

    def refuse_short(user, **kw):
        if (user.get("vllm") or {}).get("maxModelLen") == 12288:
            raise RenderError("values don't meet the specifications of the schema(s)\n"
                              "- at '/vllm/maxModelLen': got 12288, want 99999")
        return real(user, **kw)

    monkeypatch.setattr(engine, "render", refuse_short)
    alone = [cache_entry(lint_values(files, release="grpo", namespace="grpo")) for files in items]
    together = [cache_entry(r) for r in lint_values_many(items, release="grpo", namespace="grpo", ahead=2)]
    assert together == alone
    refused = [e["input_errors"] for e in alone if any("Helm's schema" in i["message"] for i in e["input_errors"])]
    assert len(refused) == 2 and refused[0][0]["key_path"] == "vllm.maxModelLen"


def test_quiet_stderr_restores_fd2_whatever_the_thread_order(capfd):
    """Renders in threads silence the Go SDK's notices on fd 2 at the same time; the last one out restores it
    (interleaved save/restore would leave the CLI's own stderr pointing at /dev/null)."""
    quiet = render.QuietStderr()
    inside = threading.Barrier(4)

    def work():
        with quiet():
            os.write(2, b"hidden\n")
            inside.wait(timeout=30)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.write(2, b"visible\n")
    err = capfd.readouterr().err
    assert "visible" in err and "hidden" not in err
